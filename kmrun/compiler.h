/*
 * compiler.h — where the compiler finds INCLUDE files the user did not
 * name a directory for (kmrun --compiler=FC): its own include directory
 * (gfortran's finclude: omp_lib.h, openacc_lib.h), an MPI wrapper's
 * include directories (mpif.h), flang's include/flang.  kmrun searches
 * them after the user's -I directories, as the compiler does.
 */
#ifndef KM_COMPILER_H
#define KM_COMPILER_H

/* The directories, asked of `compiler` (one word: a command name or
 * path), each an existing directory, in the order to search; *n of them.
 * The questions it is asked (none compiles anything; one that a compiler
 * does not know fails, quietly, and is ignored):
 *   COMPILER -print-file-name=finclude    gfortran (and wrappers of it)
 *   COMPILER --showme:incdirs             Open MPI's wrappers (mpi*)
 *   COMPILER -show                        MPICH's wrappers (mpi*): its -I
 *   COMPILER -print-resource-dir          flang: PREFIX/lib/clang/N, its
 *                                         files in PREFIX/include/flang */
char **km_compiler_include_dirs(const char *compiler, int *n);

void km_compiler_include_dirs_free(char **dirs, int n);

#endif
