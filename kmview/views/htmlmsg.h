/*
 * htmlmsg.h — the Messages view's data in the HTML report (htmlmsg.c).
 */
#ifndef KV_HTMLMSG_H
#define KV_HTMLMSG_H

#include <stdio.h>

#include "kmview/figures/stats.h"

/* The member "messages": null when no rank recorded a message, else the
 * call sites, the communication matrix and its heaviest pairs. */
void kv_html_messages(FILE *f, const struct kv_stats *st);

#endif
