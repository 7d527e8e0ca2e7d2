package io.nvmf4j.fuzz;

import io.nvmf4j.transport.rdma.RdmaParserFuzz;
import io.nvmf4j.transport.tcp.TcpPduFuzz;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The long parser fuzz run ({@code ./dev.sh fuzz}): each target gets an equal share of the time (see
 * {@link #run(List, long, long, boolean, PrintStream, long[])}), case {@code i}'s seed derived from the base
 * seed ({@link Tries#seed}); any case replays with {@code --replay TARGET:SEED}. A watchdog counts
 * a case that runs longer than {@link #HANG_MS} as a hang (and ends the run: the parser is stuck). Prints
 * progress every 10 s and a summary: cases, escapes, hangs, time.
 *
 * <pre>
 * ParserFuzz [--cases N] [--seed S] [--targets tcp-pdu,rdma-sgl,...] [--replay TARGET:SEED]
 * </pre>
 */
public final class ParserFuzz {
    static final long HANG_MS = 10_000;
    private static final int HEALTH_EVERY = 100_000;
    private static final int MAX_PRINTED = 20;

    /** Every target by name, built on demand (the TCP one starts a target). */
    public static Map<String, Supplier<FuzzTarget>> targets() {
        Map<String, Supplier<FuzzTarget>> m = new LinkedHashMap<>();
        m.put("tcp-pdu", () -> {
            try {
                return new TcpPduFuzz();
            } catch (IOException e) {
                throw new IllegalStateException("cannot start the target: " + e, e);
            }
        });
        m.put("rdma-sgl", RdmaParserFuzz.Sgl::new);
        m.put("rdma-cm-private-data", RdmaParserFuzz.CmPrivateData::new);
        m.put("config", ConfigFuzz::new);
        m.put("auth", io.nvmf4j.auth.AuthFuzz::new);
        return m;
    }

    /** Result of a run. */
    public record Result(long cases, long escapes, long hangs, long millis, List<String> firstEscapes) {
    }

    /** Runs {@code cases} cases round-robin over {@code targets} (reproducible from the seed alone). */
    public static Result run(List<FuzzTarget> targets, long cases, long seed, PrintStream out) {
        return run(targets, cases, seed, false, out, new long[targets.size()]);
    }

    /**
     * Runs {@code cases} cases over {@code targets}; escapes are collected, not thrown. With {@code fairTime}
     * the next case goes to the target that has used the least time so far, so each parser gets the same
     * share of the run's time (a TCP session costs a hundred SGL parses) and cheap parsers get more cases; a
     * case replays from the TARGET:SEED printed with it. Without, cases go round-robin. {@code perTarget}
     * receives the cases each target ran.
     */
    public static Result run(List<FuzzTarget> targets, long cases, long seed, boolean fairTime, PrintStream out,
                             long[] perTarget) {
        AtomicLong done = new AtomicLong();
        long[] escapes = {0};
        List<String> first = new ArrayList<>();
        long start = System.nanoTime();
        long[] nanos = new long[targets.size()];
        java.util.concurrent.atomic.AtomicInteger current = new java.util.concurrent.atomic.AtomicInteger();
        Thread worker = new Thread(() -> {
            for (long i = 0; i < cases; i++) {
                int k = fairTime ? leastUsed(nanos) : (int) (i % targets.size());
                FuzzTarget t = targets.get(k);
                long s = Tries.seed(seed, i);
                current.set(k);
                long t0 = System.nanoTime();
                try {
                    t.run(s);
                } catch (Throwable e) {
                    escapes[0]++;
                    String line = "ESCAPE " + t.name() + ":" + s + " " + e;
                    if (line.length() > 600) {
                        line = line.substring(0, 600) + "...";
                    }
                    if (first.size() < MAX_PRINTED) {
                        first.add(line);
                        out.println(line);
                        if (first.size() <= 3) {
                            e.printStackTrace(out);
                        }
                    }
                }
                nanos[k] += System.nanoTime() - t0;
                perTarget[k]++;
                if ((i + 1) % HEALTH_EVERY == 0) {
                    checkStillServes(targets, escapes, first, out);
                }
                done.set(i + 1);
            }
            checkStillServes(targets, escapes, first, out);
        }, "parser-fuzz");
        worker.setDaemon(true);
        worker.start();
        long hangs = 0;
        long lastDone = -1;
        long lastProgress = System.nanoTime();
        long lastPrint = System.nanoTime();
        while (worker.isAlive()) {
            try {
                worker.join(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            long now = System.nanoTime();
            long d = done.get();
            if (d != lastDone) {
                lastDone = d;
                lastProgress = now;
            } else if ((now - lastProgress) / 1_000_000 > HANG_MS) {
                hangs++;
                out.println("HANG in case " + d + " (" + targets.get(current.get()).name() + ":"
                    + Tries.seed(seed, d) + "), no progress for " + HANG_MS + " ms:");
                for (StackTraceElement e : worker.getStackTrace()) {
                    out.println("    at " + e);
                }
                break;
            }
            if (out != null && (now - lastPrint) / 1_000_000_000 >= 10) {
                lastPrint = now;
                out.printf("  %,d cases, %d escapes, %.0f s%n", d, escapes[0], (now - start) / 1e9);
            }
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        return new Result(done.get(), escapes[0], hangs, millis, first);
    }

    private static int leastUsed(long[] nanos) {
        int k = 0;
        for (int j = 1; j < nanos.length; j++) {
            if (nanos[j] < nanos[k]) {
                k = j;
            }
        }
        return k;
    }

    private static void checkStillServes(List<FuzzTarget> targets, long[] escapes, List<String> first,
                                         PrintStream out) {
        for (FuzzTarget t : targets) {
            try {
                t.checkStillServes();
            } catch (Throwable e) {
                escapes[0]++;
                String line = "ESCAPE " + t.name() + ": no longer serves after the cases: " + e;
                if (first.size() < MAX_PRINTED) {
                    first.add(line);
                    out.println(line);
                }
            }
        }
    }

    public static void main(String[] args) {
        long cases = 10_000_000;
        long seed = System.nanoTime();
        String names = String.join(",", targets().keySet());
        String replay = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--cases" -> cases = Long.parseLong(args[++i].replace("_", ""));
                case "--seed" -> seed = Long.parseLong(args[++i]);
                case "--targets" -> names = args[++i];
                case "--replay" -> replay = args[++i];
                default -> {
                    System.err.println("usage: ParserFuzz [--cases N] [--seed S] [--targets a,b] [--replay TARGET:SEED]");
                    System.exit(2);
                }
            }
        }
        quietLogs();
        if (replay != null) {
            String[] p = replay.split(":", 2);
            try (FuzzTarget t = targets().get(p[0]).get()) {
                t.run(Long.parseLong(p[1]));
                t.checkStillServes();
                System.out.println("replay " + replay + ": no escape");
            }
            return;
        }
        List<FuzzTarget> ts = new ArrayList<>();
        for (String n : names.split(",")) {
            Supplier<FuzzTarget> s = targets().get(n);
            if (s == null) {
                System.err.println("unknown target " + n + "; known: " + targets().keySet());
                System.exit(2);
            }
            ts.add(s.get());
        }
        System.out.printf("parser fuzz: %,d cases over %s, seed %d%n", cases, names, seed);
        Result r;
        long[] perTarget = new long[ts.size()];
        try {
            r = run(ts, cases, seed, true, System.out, perTarget);
        } finally {
            ts.forEach(FuzzTarget::close);
        }
        for (int k = 0; k < ts.size(); k++) {
            System.out.printf("  %,d cases: %s%n", perTarget[k], ts.get(k));
        }
        System.out.printf("parser fuzz: %,d cases, %d escapes, %d hangs, %.1f s (%,.0f cases/s), seed %d%n",
            r.cases(), r.escapes(), r.hangs(), r.millis() / 1000.0, r.cases() * 1000.0 / Math.max(1, r.millis()), seed);
        System.exit(r.escapes() == 0 && r.hangs() == 0 && r.cases() == cases ? 0 : 1);
    }

    /**
     * The target logs every refused Connect and termination at INFO: millions of lines. Only errors remain until
     * the returned action puts the root logger's level back (a test JVM runs other classes after the fuzz, and
     * those that await a log line need INFO).
     */
    static Runnable quietLogs() {
        org.slf4j.Logger root = org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        if (root instanceof ch.qos.logback.classic.Logger l) {
            ch.qos.logback.classic.Level before = l.getLevel();
            l.setLevel(ch.qos.logback.classic.Level.ERROR);
            return () -> l.setLevel(before);
        }
        return () -> { };
    }
}
