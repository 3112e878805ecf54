/* host.c -- the cpu backend as the host's compute: fills the core's table
 * (core/host.h) with the host's kernels and casts when the library loads,
 * before anything can make an array. */
#include "../../core/host.h"
#include "cpu.h"

__attribute__((constructor)) static void provide_host_compute(void) {
  const dlb_host_compute host = {&dlb_cpu_kernels, dlb_cpu_cast_strided, dlb_cast};
  dlb_host_provide(&host);
}
