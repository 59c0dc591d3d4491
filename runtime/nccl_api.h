/* NCCL as one table of function pointers, filled by dlopen() of libnccl the
 * first time a group of more than one device needs it. No NCCL header is
 * included: the few types and values below are NCCL's ABI as nccl.h 2.x
 * defines them (ncclResult_t, ncclDataType_t, ncclUniqueId; checked against
 * nccl.h 2.28, unchanged since 2.0 for what we use), and nothing links
 * libnccl. */
#ifndef FUSERUN_NCCL_API_H
#define FUSERUN_NCCL_API_H
#include <cuda.h>
#include <stddef.h>

typedef struct fr_ncclComm *fr_ncclComm_t;   /* ncclComm_t: an opaque pointer */
typedef int fr_ncclResult_t;                 /* ncclResult_t (an enum: int-sized) */
typedef int fr_ncclDataType_t;               /* ncclDataType_t */
/* ncclUniqueId: 128 opaque bytes (NCCL_UNIQUE_ID_BYTES), passed by value */
#define FR_NCCL_ID_BYTES 128
typedef struct { char internal[FR_NCCL_ID_BYTES]; } fr_ncclUniqueId;
/* ncclConfig_t as NCCL 2.14 laid it out (size, magic and version first):
   NCCL reads only the fields of the version the caller names, so this
   prefix is valid for every later 2.x. We set blocking = 0 (a join that
   returns at once and is polled: our waits are bounded) and leave the
   rest undefined (INT_MIN / NULL), as NCCL_CONFIG_INITIALIZER does. */
typedef struct fr_ncclConfig {
	size_t size;
	unsigned int magic;   /* 0xcafebeef */
	unsigned int version; /* NCCL_VERSION(2,14,0) = 21400 */
	int blocking, cgaClusterSize, minCTAs, maxCTAs;
	const char *netName;
} fr_ncclConfig;

/* ncclResult_t */
enum {
	FR_NCCL_SUCCESS = 0,            /* ncclSuccess */
	FR_NCCL_UNHANDLED_CUDA = 1,     /* ncclUnhandledCudaError */
	FR_NCCL_SYSTEM = 2,             /* ncclSystemError */
	FR_NCCL_INTERNAL = 3,           /* ncclInternalError */
	FR_NCCL_INVALID_ARGUMENT = 4,   /* ncclInvalidArgument */
	FR_NCCL_INVALID_USAGE = 5,      /* ncclInvalidUsage */
	FR_NCCL_REMOTE = 6,             /* ncclRemoteError */
	FR_NCCL_IN_PROGRESS = 7         /* ncclInProgress */
};
/* ncclDataType_t: bytes are moved as ncclInt8 (0), so no reduction is done
   by NCCL at all; combining is ours, in a fixed order (group.c) */
enum { FR_NCCL_INT8 = 0, FR_NCCL_INT32 = 2, FR_NCCL_FLOAT64 = 8 };

/* X(symbol, return type, parameters). cudaStream_t is a CUstream. */
#define FR_NCCL_API(X) \
	X(ncclGetVersion, fr_ncclResult_t, (int *version)) \
	X(ncclGetErrorString, const char *, (fr_ncclResult_t result)) \
	X(ncclCommInitAll, fr_ncclResult_t, (fr_ncclComm_t *comms, int ndev, const int *devlist)) \
	X(ncclGetUniqueId, fr_ncclResult_t, (fr_ncclUniqueId *id)) \
	X(ncclCommInitRankConfig, fr_ncclResult_t, (fr_ncclComm_t *comm, int nranks, fr_ncclUniqueId id, int rank, \
	                                            fr_ncclConfig *config)) \
	X(ncclCommDestroy, fr_ncclResult_t, (fr_ncclComm_t comm)) \
	X(ncclCommFinalize, fr_ncclResult_t, (fr_ncclComm_t comm)) \
	X(ncclCommAbort, fr_ncclResult_t, (fr_ncclComm_t comm)) \
	X(ncclCommGetAsyncError, fr_ncclResult_t, (fr_ncclComm_t comm, fr_ncclResult_t *error)) \
	X(ncclGroupStart, fr_ncclResult_t, (void)) \
	X(ncclGroupEnd, fr_ncclResult_t, (void)) \
	X(ncclAllGather, fr_ncclResult_t, (const void *send, void *recv, size_t count, fr_ncclDataType_t type, \
	                                   fr_ncclComm_t comm, CUstream stream)) \
	X(ncclBroadcast, fr_ncclResult_t, (const void *send, void *recv, size_t count, fr_ncclDataType_t type, int root, \
	                                   fr_ncclComm_t comm, CUstream stream))

typedef struct fr_nccl {
#define FR_NCCL_FIELD(sym, ret, params) ret (*sym) params;
	FR_NCCL_API(FR_NCCL_FIELD)
#undef FR_NCCL_FIELD
	int version;   /* ncclGetVersion: 22809 for 2.28.9 */
} fr_nccl;

/* The table, loaded ($FUSERUN_NCCL, else libnccl.so.2); 0 or FZ_ERR_NO_NCCL
   with the message in err (FZ_ERRMSG_SIZE bytes, may be NULL). A failed load
   is not cached: a later call tries again. */
int fr_nccl_get(const fr_nccl **api, char *err);

/* Formats "call: NCCL error N: text" into err; returns FZ_ERR_NCCL. */
int fr_nccl_error(const fr_nccl *api, char *err, const char *call, fr_ncclResult_t r);

#endif
