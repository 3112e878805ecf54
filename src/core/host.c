/* host.c -- the host's compute, as its backend provided it (host.h). */
#include "host.h"

dlb_host_compute dlb_host;

void dlb_host_provide(const dlb_host_compute *host) { dlb_host = *host; }
