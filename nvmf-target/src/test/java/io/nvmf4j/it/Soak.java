package io.nvmf4j.it;

import io.netty.buffer.PooledByteBufAllocator;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Soak without leaks (issue 15, item 4): with the target in-process and the Java host over loopback TCP,
 * {@code cycles} controller connect/disconnect cycles (admin + one I/O queue, one verified write/read each), then
 * {@code cycles} namespace add/remove cycles while a host stays connected (it reads through the whole run). Before
 * (after a warm-up of 20 cycles of each, so pools and threads exist) and after, it prints heap used after GC,
 * direct memory (the JDK's "direct" BufferPoolMXBean and Netty's pooled allocator), threads, open file
 * descriptors ({@code /proc/self/fd}) and controller ids in use, and fails unless each is back within its tolerance.
 *
 * <p>{@code ./dev.sh soak [--cycles N]} runs it (1000 by default); {@code SoakTest} runs 200 in the normal suite.
 */
public final class Soak {
    /** Tolerances: what "back to baseline" allows. */
    static final long HEAP_TOLERANCE = 32L << 20;
    static final long DIRECT_TOLERANCE = 16L << 20;
    static final int THREAD_TOLERANCE = 2;
    static final int FD_TOLERANCE = 4;
    private static final int WARM_UP = 20;
    private static final int SPARE_NSID = 7;

    /** One sample of what a leak would grow. */
    record Sample(long heapAfterGc, long directJdk, long directNetty, int threads, int fds, int controllers) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "heap after GC %,d B, direct %,d B (JDK) + %,d B (Netty pool), "
                + "threads %d, open fds %d, controllers %d", heapAfterGc, directJdk, directNetty, threads, fds,
                controllers);
        }
    }

    private Soak() {
    }

    public static void main(String[] args) throws Exception {
        int cycles = 1000;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--cycles") && i + 1 < args.length) {
                cycles = Integer.parseInt(args[++i]);
            } else {
                System.err.println("usage: Soak [--cycles N]");
                System.exit(2);
            }
        }
        // every connect and namespace change is an INFO line; the soak prints its own figures
        ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME))
            .setLevel(ch.qos.logback.classic.Level.WARN);
        List<String> problems = run(cycles);
        System.out.println(problems.isEmpty() ? "soak: PASS" : "soak: FAIL\n  " + String.join("\n  ", problems));
        System.exit(problems.isEmpty() ? 0 : 1);
    }

    /** Runs both soaks of {@code cycles} each, printing the samples; returns what did not come back. */
    static List<String> run(int cycles) throws Exception {
        List<String> problems = new ArrayList<>();
        try (TestTarget target = TestTarget.start(c -> c.bdevs.add(
            new BdevConfig("soak0", "malloc", TestTarget.BLOCK_SIZE, TestTarget.SMALL_BLOCKS)))) {
            connectCycles(target, WARM_UP);
            Sample before = sample(target);
            System.out.println("connect/disconnect: before " + before);
            long t0 = System.nanoTime();
            connectCycles(target, cycles);
            Sample after = settled(target, before);
            System.out.printf(Locale.ROOT, "connect/disconnect: after %d cycles (%.1f s) %s%n", cycles,
                (System.nanoTime() - t0) / 1e9, after);
            compare("connect/disconnect", before, after, problems);

            try (NvmeController host = target.controller(1, TcpHostOptions.DEFAULT)) {
                namespaceCycles(target, host, WARM_UP);
                before = sample(target);
                System.out.println("namespace add/remove: before " + before);
                t0 = System.nanoTime();
                namespaceCycles(target, host, cycles);
                after = settled(target, before);
                System.out.printf(Locale.ROOT, "namespace add/remove: after %d cycles (%.1f s) %s%n", cycles,
                    (System.nanoTime() - t0) / 1e9, after);
                compare("namespace add/remove", before, after, problems);
                if (!host.io(0).read(1, 0, 8).ok()) {
                    problems.add("the connected host's read failed after the namespace cycles");
                }
            }
        }
        return problems;
    }

    private static void connectCycles(TestTarget target, int n) throws IOException {
        for (int i = 0; i < n; i++) {
            try (NvmeController c = target.controller(1, TcpHostOptions.DEFAULT)) {
                TestTarget.assertWriteReadBack(c.io(0), 8L * (i % 1024), 4096, i);
            }
        }
    }

    private static void namespaceCycles(TestTarget target, NvmeController host, int n) {
        for (int i = 0; i < n; i++) {
            target.nvmf().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(SPARE_NSID, "soak0"));
            if (!host.io(0).read(SPARE_NSID, i % 64, 1).ok()) {
                throw new AssertionError("read of the added namespace failed in cycle " + i);
            }
            target.nvmf().removeNamespace(TestTarget.SUBNQN, SPARE_NSID);
        }
    }

    /** A sample once the controllers are back to {@code baseline}'s count (teardown is asynchronous; 10 s at most). */
    private static Sample settled(TestTarget target, Sample baseline) throws Exception {
        Sample s = sample(target);
        for (int i = 0; i < 100 && (s.controllers() != baseline.controllers() || s.threads() > baseline.threads()
            || s.fds() > baseline.fds()); i++) {
            Thread.sleep(100);
            s = sample(target);
        }
        return s;
    }

    static Sample sample(TestTarget target) throws IOException {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        long direct = 0;
        for (BufferPoolMXBean b : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (b.getName().equals("direct")) {
                direct = b.getMemoryUsed();
            }
        }
        long netty = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
        int threads = ManagementFactory.getThreadMXBean().getThreadCount();
        int fds;
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            fds = (int) s.count();
        }
        int controllers = target.nvmf().controllers(TestTarget.SUBNQN).size();
        return new Sample(heap, direct, netty, threads, fds, controllers);
    }

    private static void compare(String what, Sample before, Sample after, List<String> problems) {
        check(problems, what, "heap after GC", before.heapAfterGc(), after.heapAfterGc(), HEAP_TOLERANCE);
        check(problems, what, "direct memory (JDK)", before.directJdk(), after.directJdk(), DIRECT_TOLERANCE);
        check(problems, what, "direct memory (Netty pool)", before.directNetty(), after.directNetty(),
            DIRECT_TOLERANCE);
        check(problems, what, "threads", before.threads(), after.threads(), THREAD_TOLERANCE);
        check(problems, what, "open fds", before.fds(), after.fds(), FD_TOLERANCE);
        check(problems, what, "controllers", before.controllers(), after.controllers(), 0);
    }

    private static void check(List<String> problems, String what, String name, long before, long after, long tolerance) {
        if (after - before > tolerance) {
            problems.add(String.format(Locale.ROOT, "%s: %s grew from %,d to %,d (tolerance %,d)", what, name, before,
                after, tolerance));
        }
    }
}
