package io.nvmf4j.testhost;

import java.lang.management.ManagementFactory;

/** Heap bytes allocated so far by the target's poll-group threads (JVM per-thread allocation counters). */
public final class PollThreadAllocation {
    private PollThreadAllocation() {
    }

    /** The JVM's counter bean with per-thread allocation counting switched on, or null when unsupported. */
    public static com.sun.management.ThreadMXBean threads() {
        com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        if (!threads.isThreadAllocatedMemorySupported()) {
            return null;
        }
        threads.setThreadAllocatedMemoryEnabled(true);
        return threads;
    }

    /** Sum of the allocated bytes of every live thread named {@code nvmf4j-poll*}. */
    public static long pollThreadBytes(com.sun.management.ThreadMXBean threads) {
        return threadBytes(threads, "nvmf4j-poll");
    }

    /** Sum of the allocated bytes of every live thread whose name starts with one of {@code prefixes}. */
    public static long threadBytes(com.sun.management.ThreadMXBean threads, String... prefixes) {
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (java.util.Arrays.stream(prefixes).anyMatch(t.getName()::startsWith)) {
                long b = threads.getThreadAllocatedBytes(t.getId());
                if (b > 0) {
                    sum += b;
                }
            }
        }
        return sum;
    }
}
