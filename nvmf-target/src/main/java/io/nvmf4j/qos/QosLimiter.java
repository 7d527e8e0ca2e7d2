package io.nvmf4j.qos;

import io.nvmf4j.config.QosLimits;

/**
 * The buckets of one QoS object ({@link QosLimits}: a namespace, a host on a namespace or subsystem, a group), shared
 * by every namespace and poll group it covers. Immutable; a changed limit makes a new limiter.
 */
public final class QosLimiter {
    private final QosLimits limits;
    private final RateBucket iops;
    private final RateBucket read;
    private final RateBucket write;
    private final RateBucket rw;

    public QosLimiter(QosLimits limits, long now) {
        this.limits = limits.limits();
        this.iops = bucket(QosLimits.value(limits.iops), now);
        this.read = bucket(bytes(limits.readMBps), now);
        this.write = bucket(bytes(limits.writeMBps), now);
        this.rw = bucket(bytes(limits.rwMBps), now);
    }

    private static long bytes(Long mbps) {
        return QosLimits.value(mbps) * QosLimits.BYTES_PER_MB;
    }

    private static RateBucket bucket(long rate, long now) {
        return rate == 0 ? null : new RateBucket(rate, now);
    }

    /** The limits it holds. */
    public QosLimits limits() {
        return limits;
    }

    /**
     * Takes the budget of one I/O that moves {@code bytes} of data ({@code read}: to the host) at {@code now}; returns
     * the time from which it may start (the latest its limits allow), {@link Long#MIN_VALUE} when none applies.
     */
    public long reserve(boolean read, long bytes, long now) {
        long start = Long.MIN_VALUE;
        if (iops != null) {
            start = iops.reserve(1, now);
        }
        if (bytes > 0) {
            start = later(start, rw, bytes, now);
            start = later(start, read ? this.read : write, bytes, now);
        }
        return start;
    }

    private static long later(long start, RateBucket b, long bytes, long now) {
        if (b == null) {
            return start;
        }
        long s = b.reserve(bytes, now);
        return start == Long.MIN_VALUE || s - start > 0 ? s : start;
    }
}
