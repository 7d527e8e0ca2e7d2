package io.nvmf4j.runtime;

/**
 * Netty settings the poll groups depend on, applied as system properties before Netty's classes read
 * them (Netty reads each once, in a static initializer). A property the user set on the command line
 * wins.
 *
 * <p>{@code io.netty.recycler.chunkSize} (Netty's default 32): Netty recycles the objects of every
 * write (outbound-buffer entries, pooled-buffer cache entries) through a per-thread pool whose local
 * batch holds chunk-size handles; releases past it go through a linked-chunk queue that allocates a new
 * chunk every chunk-size releases. With more responses than that in flight on a poll group (the Linux
 * host at QD 32 was enough) the data path allocated about 10 bytes per I/O. 1024 handles (8 KiB per
 * pool and thread) keep deep queues allocation-free.
 *
 * <p>{@code io.netty.leakDetection.level} (Netty's default {@code simple}): the sampling leak detector
 * records a stack trace for one buffer in 128, and the data path takes several buffers per I/O; a profile
 * of 4 KiB reads at QD 32 found it at about 5 % of the poll group's time (Throwable.fillInStackTrace and
 * the young collections of its garbage). The data path's buffers have one owner each and are covered by
 * the tests, which run with {@code paranoid}; the service runs with {@code disabled}. Set the property
 * (for example {@code NVMF4J_JAVA_OPTS=-Dio.netty.leakDetection.level=simple}) to turn it on.
 */
public final class NettyDefaults {
    static final String RECYCLER_CHUNK_SIZE = "io.netty.recycler.chunkSize";
    static final String RECYCLER_CHUNK_SIZE_DEFAULT = "1024";
    static final String LEAK_DETECTION = "io.netty.leakDetection.level";
    /** The name older Netty versions read (Netty still honours it; a user setting either wins). */
    static final String LEAK_DETECTION_OLD = "io.netty.leakDetectionLevel";

    static {
        if (System.getProperty(RECYCLER_CHUNK_SIZE) == null) {
            System.setProperty(RECYCLER_CHUNK_SIZE, RECYCLER_CHUNK_SIZE_DEFAULT);
        }
        if (System.getProperty(LEAK_DETECTION) == null && System.getProperty(LEAK_DETECTION_OLD) == null) {
            System.setProperty(LEAK_DETECTION, "disabled");
        }
    }

    private NettyDefaults() {
    }

    /**
     * Applies the settings (once; later calls do nothing). Call it before anything touches Netty:
     * first thing in {@code main}; {@link PollGroups} calls it as well for embedded use.
     */
    public static void apply() {
        // the static initializer did the work
    }
}
