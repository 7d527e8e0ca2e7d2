package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * Rate limits of a QoS object (a namespace, a host on a namespace or subsystem, a group of namespaces): each absent or
 * 0 is unlimited. A MB is 2^20 bytes (SPDK's bdev QoS unit). Every limit an I/O falls under holds: IOPS counts every
 * I/O command that reaches the device; the MB/s limits count the data of reads (Read, Compare) and writes (Write).
 * Granularity (docs/configuration.md, "QoS"): the java engine takes any value (it paces each I/O to the nanosecond);
 * the spdk engine (SPDK's bdev QoS) takes IOPS in multiples of {@value #SPDK_IOPS_STEP} and refuses others.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public class QosLimits {
    /** The largest MB/s: its bytes per second (times 2^20) still fit a signed 64-bit number. */
    public static final long MAX_MBPS = Long.MAX_VALUE >> 20;
    /** SPDK's bdev QoS takes IOPS in steps of this (SPDK_BDEV_QOS_MIN_IOS_PER_SEC). */
    public static final long SPDK_IOPS_STEP = 1000;
    /** Bytes in a MB of these limits. */
    public static final long BYTES_PER_MB = 1L << 20;

    /** I/O commands per second; 0 or absent: unlimited. */
    @Range(min = 0, max = Long.MAX_VALUE, note = "0: unlimited")
    public Long iops;
    /** Read data, MB (2^20 bytes) per second; 0 or absent: unlimited. */
    @Range(min = 0, max = MAX_MBPS, note = "MB of 2^20 bytes; 0: unlimited")
    public Long readMBps;
    /** Written data, MB (2^20 bytes) per second; 0 or absent: unlimited. */
    @Range(min = 0, max = MAX_MBPS, note = "MB of 2^20 bytes; 0: unlimited")
    public Long writeMBps;
    /** Read and written data together, MB (2^20 bytes) per second; 0 or absent: unlimited. */
    @Range(min = 0, max = MAX_MBPS, note = "MB of 2^20 bytes; 0: unlimited")
    public Long rwMBps;

    /** The names of the limit fields, in order. */
    public static final java.util.List<String> FIELDS = java.util.List.of("iops", "readMBps", "writeMBps", "rwMBps");

    public QosLimits() {
    }

    public QosLimits(Long iops, Long readMBps, Long writeMBps, Long rwMBps) {
        this.iops = iops;
        this.readMBps = readMBps;
        this.writeMBps = writeMBps;
        this.rwMBps = rwMBps;
    }

    /** The limits alone (a {@link QosConfig}'s without its hosts). */
    public QosLimits limits() {
        return new QosLimits(iops, readMBps, writeMBps, rwMBps);
    }

    /** Sets the limits of {@code from} (null: none). */
    public void setLimits(QosLimits from) {
        iops = from == null ? null : from.iops;
        readMBps = from == null ? null : from.readMBps;
        writeMBps = from == null ? null : from.writeMBps;
        rwMBps = from == null ? null : from.rwMBps;
    }

    /** Whether no limit is set (each absent or 0). */
    @JsonIgnore
    public boolean isUnlimited() {
        return value(iops) == 0 && value(readMBps) == 0 && value(writeMBps) == 0 && value(rwMBps) == 0;
    }

    /** A limit's value, 0 for absent. */
    public static long value(Long v) {
        return v == null ? 0 : v;
    }

    /** Same limits (absent and 0 alike). */
    public boolean sameLimits(QosLimits o) {
        return o != null && value(iops) == value(o.iops) && value(readMBps) == value(o.readMBps)
            && value(writeMBps) == value(o.writeMBps) && value(rwMBps) == value(o.rwMBps);
    }

    @Override
    public String toString() {
        return "{iops=" + value(iops) + ", readMBps=" + value(readMBps) + ", writeMBps=" + value(writeMBps)
            + ", rwMBps=" + value(rwMBps) + "}";
    }
}
