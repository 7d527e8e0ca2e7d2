package io.nvmf4j.rdma;

/**
 * libibverbs: PD, MR, completion channel, CQ, SRQ, RC QP on a CM id, and the data path. All
 * handles are {@code long}; creators return a handle or a negative errno. The data-path calls
 * ({@link #postSend}, {@link #postRecv}, {@link #postSrqRecv}, {@link #pollCq},
 * {@link #reqNotifyCq}, {@link #getCqEvent}, {@link #ackCqEvents}) return a negative errno on
 * failure and never throw or allocate; call them from the thread that owns the queue.
 */
public final class Verbs {
    static {
        Rdma.ensureLibraryLoaded();
    }

    public static final int WR_RDMA_WRITE = Layout.intValue("wr.RDMA_WRITE");
    public static final int WR_RDMA_WRITE_WITH_IMM = Layout.intValue("wr.RDMA_WRITE_WITH_IMM");
    public static final int WR_SEND = Layout.intValue("wr.SEND");
    public static final int WR_SEND_WITH_IMM = Layout.intValue("wr.SEND_WITH_IMM");
    public static final int WR_RDMA_READ = Layout.intValue("wr.RDMA_READ");
    public static final int WR_SEND_WITH_INV = Layout.intValue("wr.SEND_WITH_INV");

    public static final int SEND_FENCE = Layout.intValue("send.FENCE");
    public static final int SEND_SIGNALED = Layout.intValue("send.SIGNALED");
    public static final int SEND_SOLICITED = Layout.intValue("send.SOLICITED");
    public static final int SEND_INLINE = Layout.intValue("send.INLINE");

    public static final int WC_SEND = Layout.intValue("wc.SEND");
    public static final int WC_RDMA_WRITE = Layout.intValue("wc.RDMA_WRITE");
    public static final int WC_RDMA_READ = Layout.intValue("wc.RDMA_READ");
    public static final int WC_RECV = Layout.intValue("wc.RECV");
    public static final int WC_RECV_RDMA_WITH_IMM = Layout.intValue("wc.RECV_RDMA_WITH_IMM");

    public static final int WC_SUCCESS = Layout.intValue("wc.status.SUCCESS");
    public static final int WC_LOC_LEN_ERR = Layout.intValue("wc.status.LOC_LEN_ERR");
    public static final int WC_LOC_PROT_ERR = Layout.intValue("wc.status.LOC_PROT_ERR");
    public static final int WC_WR_FLUSH_ERR = Layout.intValue("wc.status.WR_FLUSH_ERR");
    public static final int WC_REM_ACCESS_ERR = Layout.intValue("wc.status.REM_ACCESS_ERR");
    public static final int WC_REM_OP_ERR = Layout.intValue("wc.status.REM_OP_ERR");
    public static final int WC_RETRY_EXC_ERR = Layout.intValue("wc.status.RETRY_EXC_ERR");
    public static final int WC_RNR_RETRY_EXC_ERR = Layout.intValue("wc.status.RNR_RETRY_EXC_ERR");

    public static final int WC_WITH_IMM = Layout.intValue("wc.flag.WITH_IMM");
    public static final int WC_WITH_INV = Layout.intValue("wc.flag.WITH_INV");

    public static final int ACCESS_LOCAL_WRITE = Layout.intValue("access.LOCAL_WRITE");
    public static final int ACCESS_REMOTE_WRITE = Layout.intValue("access.REMOTE_WRITE");
    public static final int ACCESS_REMOTE_READ = Layout.intValue("access.REMOTE_READ");
    public static final int ACCESS_REMOTE_ATOMIC = Layout.intValue("access.REMOTE_ATOMIC");

    /** {@code ibv_device.transport_type}: InfiniBand and RoCE, iWARP. */
    public static final int TRANSPORT_IB = Layout.intValue("transport.IB");
    public static final int TRANSPORT_IWARP = Layout.intValue("transport.IWARP");

    private Verbs() {
    }

    // ---- PD, MR (control plane) ----

    public static long allocPd(long context) {
        return Native.allocPd(context);
    }

    public static int deallocPd(long pd) {
        return Native.deallocPd(pd);
    }

    /** {@code ibv_reg_mr} of {@code [address, address + length)} with ACCESS_* flags. */
    public static long regMr(long pd, long address, long length, int access) {
        return Native.regMr(pd, address, length, access);
    }

    public static int deregMr(long mr) {
        return Native.deregMr(mr);
    }

    public static int lkey(long mr) {
        return Native.mrLkey(mr);
    }

    public static int rkey(long mr) {
        return Native.mrRkey(mr);
    }

    /** The device's transport type ({@link #TRANSPORT_IB}, {@link #TRANSPORT_IWARP}, ...), or a negative errno. */
    public static int deviceTransport(long context) {
        return Native.deviceTransport(context);
    }

    /**
     * The access flags for memory that is only the local end of work requests this side posts (SEND
     * sources, receive buffers, the source of an RDMA WRITE and the sink of an RDMA READ): local write,
     * and on iWARP also remote write, because there the peer places an RDMA READ's response into the
     * sink like a tagged write (RFC 5040), which the sink's memory must allow. No other remote access.
     */
    public static int localAccess(long context) {
        return ACCESS_LOCAL_WRITE | (deviceTransport(context) == TRANSPORT_IWARP ? ACCESS_REMOTE_WRITE : 0);
    }

    // ---- completion channel, CQ ----

    public static long createCompChannel(long context) {
        return Native.createCompChannel(context);
    }

    public static int destroyCompChannel(long channel) {
        return Native.destroyCompChannel(channel);
    }

    /** The completion channel's fd, for epoll / {@link Rdma#pollIn} / {@link Rdma#setNonBlocking}. */
    public static int compChannelFd(long channel) {
        return Native.compChannelFd(channel);
    }

    /** A CQ of at least {@code cqe} entries, tied to {@code compChannel} (0 for none). */
    public static long createCq(long context, int cqe, long compChannel, int compVector) {
        return Native.createCq(context, cqe, compChannel, compVector);
    }

    public static int destroyCq(long cq) {
        return Native.destroyCq(cq);
    }

    /** Arms the CQ: the next completion (solicited only, if asked) raises a channel event. */
    public static int reqNotifyCq(long cq, boolean solicitedOnly) {
        return Native.reqNotifyCq(cq, solicitedOnly);
    }

    /**
     * Waits for an armed CQ of the channel to fire and returns it (or a negative errno; -EAGAIN
     * on a non-blocking channel). Each returned event must be acked with {@link #ackCqEvents}
     * before the CQ is destroyed; batching the acks is fine.
     */
    public static long getCqEvent(long compChannel) {
        return Native.getCqEvent(compChannel);
    }

    public static int ackCqEvents(long cq, int count) {
        return Native.ackCqEvents(cq, count);
    }

    /** Polls up to {@code max} completions into {@code completions[0, max)}; returns the count or -EIO. */
    public static int pollCq(long cq, Completions completions, int max) {
        return Native.pollCq(cq, completions.address, max);
    }

    // ---- SRQ, QP ----

    public static long createSrq(long pd, int maxWr, int maxSge, int limit) {
        return Native.createSrq(pd, maxWr, maxSge, limit);
    }

    public static int destroySrq(long srq) {
        return Native.destroySrq(srq);
    }

    /**
     * {@code rdma_create_qp}: an RC QP on the CM id, receiving from {@code srq} (0: its own
     * receive queue of {@code maxRecvWr}). Returns the QP handle or a negative errno.
     *
     * @param caps if not null, receives what the provider granted; see {@link QpCaps}
     */
    public static long createQp(long id, long pd, long sendCq, long recvCq, long srq, int maxSendWr,
            int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData, boolean signalAll, QpCaps caps) {
        return Native.createQp(id, pd, sendCq, recvCq, srq, maxSendWr, maxRecvWr, maxSendSge, maxRecvSge,
                maxInlineData, signalAll, caps == null ? null : caps.values);
    }

    /**
     * {@code rdma_destroy_qp} of the QP on a CM id. An id without a QP (never created, or destroyed
     * already) is left as it is and 0 returned, so a cleanup path may call this whatever step failed.
     */
    public static int destroyQp(long id) {
        return Native.destroyQp(id);
    }

    public static int qpNum(long qp) {
        return Native.qpNum(qp);
    }

    /** Moves the QP to the error state so every outstanding WR completes with WR_FLUSH_ERR. */
    public static int qpToError(long qp) {
        return Native.qpToError(qp);
    }

    // ---- data path ----

    /**
     * Posts entries {@code [first, first + count)} as one chain (one doorbell). Returns
     * {@code count} or a negative errno; after a failure {@link NativeArray#badIndex()} is the
     * first entry not posted (entries before it were).
     */
    public static int postSend(long qp, SendWorkRequests wrs, int first, int count) {
        return Native.postSend(qp, wrs.address, first, count);
    }

    /** Posts receives to a QP's own receive queue; same contract as {@link #postSend}. */
    public static int postRecv(long qp, RecvWorkRequests wrs, int first, int count) {
        return Native.postRecv(qp, wrs.address, first, count);
    }

    /** Posts receives to a shared receive queue; same contract as {@link #postSend}. */
    public static int postSrqRecv(long srq, RecvWorkRequests wrs, int first, int count) {
        return Native.postSrqRecv(srq, wrs.address, first, count);
    }

    /** {@code ibv_wc_status_str}, e.g. "Work Request Flushed Error". */
    public static String wcStatusName(int status) {
        return Native.wcStatusName(status);
    }
}
