package io.nvmf4j.rdma;

/**
 * A device's asynchronous events ({@code ibv_get_async_event}): QP fatal / request / access errors,
 * last WQE reached (a QP on an SRQ has taken its last receive), CQ and SRQ errors, port and device
 * events. Read on the device's async fd ({@link #fd}, made non-blocking for epoll); each event is acked
 * by the native call as soon as it is copied, so no teardown ever waits for an ack. One reader thread;
 * {@link #next} allocates nothing.
 */
public final class AsyncEvents {
    public static final int CQ_ERR = Layout.intValue("async.CQ_ERR");
    public static final int QP_FATAL = Layout.intValue("async.QP_FATAL");
    public static final int QP_REQ_ERR = Layout.intValue("async.QP_REQ_ERR");
    public static final int QP_ACCESS_ERR = Layout.intValue("async.QP_ACCESS_ERR");
    public static final int COMM_EST = Layout.intValue("async.COMM_EST");
    public static final int SQ_DRAINED = Layout.intValue("async.SQ_DRAINED");
    public static final int PATH_MIG = Layout.intValue("async.PATH_MIG");
    public static final int PATH_MIG_ERR = Layout.intValue("async.PATH_MIG_ERR");
    public static final int DEVICE_FATAL = Layout.intValue("async.DEVICE_FATAL");
    public static final int PORT_ACTIVE = Layout.intValue("async.PORT_ACTIVE");
    public static final int PORT_ERR = Layout.intValue("async.PORT_ERR");
    public static final int LID_CHANGE = Layout.intValue("async.LID_CHANGE");
    public static final int PKEY_CHANGE = Layout.intValue("async.PKEY_CHANGE");
    public static final int SM_CHANGE = Layout.intValue("async.SM_CHANGE");
    public static final int SRQ_ERR = Layout.intValue("async.SRQ_ERR");
    public static final int SRQ_LIMIT_REACHED = Layout.intValue("async.SRQ_LIMIT_REACHED");
    public static final int QP_LAST_WQE_REACHED = Layout.intValue("async.QP_LAST_WQE_REACHED");
    public static final int CLIENT_REREGISTER = Layout.intValue("async.CLIENT_REREGISTER");
    public static final int GID_CHANGE = Layout.intValue("async.GID_CHANGE");

    private final long context;
    private final long[] out = new long[3];

    /** The events of device {@code context}; its fd is set non-blocking here. */
    public AsyncEvents(long context) {
        this.context = context;
        int rc = Native.setNonBlocking(fd(), true);
        if (rc < 0) {
            throw new IllegalStateException("O_NONBLOCK on the async event fd: " + Native.strerror(rc));
        }
    }

    /** The device's async event fd, for epoll. */
    public int fd() {
        return Native.asyncFd(context);
    }

    /** Takes (and acks) the next event: 0, or -EAGAIN when there is none, or another negative errno. */
    public int next() {
        return Native.getAsyncEvent(context, out);
    }

    /** Type of the event {@link #next} took. */
    public int type() {
        return (int) out[0];
    }

    /** The QP handle (as {@link Verbs#createQp} returned it) of a QP event, else 0. */
    public long qp() {
        return isQpEvent(type()) ? out[1] : 0;
    }

    /** The QP number of a QP event. */
    public int qpNum() {
        return (int) out[2];
    }

    /** The port of a port event. */
    public int port() {
        return (int) out[1];
    }

    public static boolean isQpEvent(int type) {
        return type == QP_FATAL || type == QP_REQ_ERR || type == QP_ACCESS_ERR || type == COMM_EST
            || type == SQ_DRAINED || type == PATH_MIG || type == PATH_MIG_ERR || type == QP_LAST_WQE_REACHED;
    }

    /** {@code ibv_event_type_str}, e.g. "last WQE reached". */
    public static String name(int type) {
        return Native.asyncEventName(type);
    }
}
