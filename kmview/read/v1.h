/*
 * v1.h — a run read from KM_output version 1 files, brought into the
 * version 2 shape every kmview command works on.
 */
#ifndef KV_V1_H
#define KV_V1_H

#include "kmview/read/model.h"

/* Per rank (after reading every file): MPI start-up is the time of the
 * CALL MPI_INIT / MPI_INIT_THREAD statements, taken out of the MPI time
 * and out of the MPI column of the routines that call them; time in
 * uninstrumented routines is version 1's time in unmeasured callees less
 * its MPI time; libkm overhead is version 1's clock-read cost (Total);
 * there is no Estimated time (NaN) and no estimate marks. */
void kv_v1_upgrade(struct kv_run *run);

#endif
