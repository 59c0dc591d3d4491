#ifndef FUSEC_VERSION_H
#define FUSEC_VERSION_H
/* Artifacts record this; the runtime accepts artifacts of the same major. */
#define FUSEC_VERSION "0.1.0"
#define FUSEC_VERSION_MAJOR 0
#endif
