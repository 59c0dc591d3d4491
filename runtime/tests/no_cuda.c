/* A library that is not a CUDA driver: it has cuInit and cuDriverGetVersion
 * but none of the rest, for the runtime's "symbols missing" test. */
int cuInit(unsigned int flags);
int cuDriverGetVersion(int *version);
int cuInit(unsigned int flags) { return (int)flags; }
int cuDriverGetVersion(int *version) { *version = 1000; return 0; }
