package io.nvmf4j.rdma;

import java.nio.ByteBuffer;

/**
 * The JNI entry points of {@code libnvmf4j_rdma}, registered by the library's {@code JNI_OnLoad}.
 *
 * <p>Handles are native pointers as {@code long}; 0 means "none". Calls that create an object
 * return its handle or a negative errno; the others return 0 (or a count) or a negative errno.
 * None of the data-path calls throws or allocates. Use the public facades ({@link RdmaCm},
 * {@link Verbs}, {@link Rdma}), which document each call.
 */
final class Native {
    /** Must equal {@code NVMF4J_RDMA_ABI_VERSION} in {@code nvmf4j_rdma.h}; JNI_OnLoad checks it. */
    static final int ABI_VERSION = 2;

    private Native() {
    }

    // library, devices, arrays, fds (nvmf4j_rdma.c)
    static native int abiVersion();
    static native String layout();
    static native int deviceCount();
    static native long[] deviceContexts();
    static native String deviceName(long context);
    static native String strerror(int errno);
    static native ByteBuffer allocArray(int kind, int capacity, int maxSge);
    static native int freeArray(long base);
    static native long bufferAddress(ByteBuffer buffer);
    static native int setNonBlocking(int fd, boolean nonBlocking);
    static native int pollIn(int fd, int timeoutMs);

    // librdmacm (nvmf4j_cm.c)
    static native long createEventChannel(boolean nonBlocking);
    static native int eventChannelFd(long channel);
    static native int destroyEventChannel(long channel);
    static native long createId(long channel, int portSpace);
    static native int migrateId(long id, long channel);
    static native int bindAddr(long id, byte[] address, int port, int scopeId);
    static native int resolveAddr(long id, byte[] address, int port, int scopeId, int timeoutMs);
    static native int resolveRoute(long id, int timeoutMs);
    static native int listen(long id, int backlog);
    static native int connect(long id, byte[] privateData, int responderResources, int initiatorDepth,
            int retryCount, int rnrRetryCount);
    static native int accept(long id, byte[] privateData, int responderResources, int initiatorDepth,
            int rnrRetryCount);
    static native int acceptRts(long id, byte[] privateData, int responderResources, int initiatorDepth,
            int rnrRetry);
    static native int reject(long id, byte[] privateData);
    static native int disconnect(long id);
    static native int destroyId(long id);
    static native int getCmEvent(long channel, long events, int index);
    static native int ackCmEvent(long event);
    static native long cmIdContext(long id);
    static native int cmIdPortNum(long id);
    static native long cmIdQp(long id);
    static native String cmIdAddress(long id, boolean peer);
    static native String eventName(int type);

    // libibverbs (nvmf4j_verbs.c)
    static native int queryDevice(long context, long[] out);
    static native int queryPort(long context, int port, long[] out);
    static native long allocPd(long context);
    static native int deallocPd(long pd);
    static native long regMr(long pd, long address, long length, int access);
    static native int deregMr(long mr);
    static native int mrLkey(long mr);
    static native int mrRkey(long mr);
    static native long createCompChannel(long context);
    static native int destroyCompChannel(long channel);
    static native int compChannelFd(long channel);
    static native long createCq(long context, int cqe, long compChannel, int compVector);
    static native int destroyCq(long cq);
    static native int reqNotifyCq(long cq, boolean solicitedOnly);
    static native long getCqEvent(long compChannel);
    static native int ackCqEvents(long cq, int count);
    static native int pollCq(long cq, long completions, int max);
    static native long createSrq(long pd, int maxWr, int maxSge, int limit);
    static native int destroySrq(long srq);
    static native long createQp(long id, long pd, long sendCq, long recvCq, long srq, int maxSendWr,
            int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData, boolean signalAll, int[] capsOut);
    static native int destroyQp(long id);
    static native int qpNum(long qp);
    static native int qpToError(long qp);
    static native int postSend(long qp, long wrs, int first, int count);
    static native int postRecv(long qp, long wrs, int first, int count);
    static native int postSrqRecv(long srq, long wrs, int first, int count);
    static native String wcStatusName(int status);
    static native int deviceTransport(long context);
    static native int asyncFd(long context);
    static native int getAsyncEvent(long context, long[] out);
    static native String asyncEventName(int type);

    // hugepage arena (nvmf4j_arena.c)
    static native ByteBuffer mmapArena(long size, long hugePageSize, boolean hugepages, long[] info);
    static native int munmapArena(long address, long length);
}
