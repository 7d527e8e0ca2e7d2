package io.nvmf4j.fuzz;

import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Pdu;
import io.nvmf4j.testhost.PduCodec;
import io.nvmf4j.testhost.Sqe;
import io.nvmf4j.testhost.TcpHostOptions;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * The live network fuzzer ({@code bin/nvmf4j-fuzz}, issue 15): real NVMe/TCP connections to a running target
 * with mutated but plausible sequences, while a verifying host writes, reads back and compares on another
 * subsystem and must never see an error. Each case is one scenario on fresh connections:
 * <ul>
 *   <li>mutated admin or I/O capsules after a valid ICReq and Connect (the SQE, its data or the framed PDU);</li>
 *   <li>truncated PDUs (a valid PDU cut short, then the connection closed, or stalled and completed later);</li>
 *   <li>H2CData out of order, for unknown tags, beyond the R2T, duplicated, or never sent;</li>
 *   <li>floods: thousands of Keep Alives pipelined, and far more Asynchronous Event Requests than AERL;</li>
 *   <li>many queues: I/O queue Connects up to and beyond the granted number, duplicate QIDs;</li>
 *   <li>Connect storms: dozens of connections connecting at once and vanishing without a Disconnect;</li>
 *   <li>bad ICReqs (mutated, repeated, missing);</li>
 * </ul>
 * and in every scenario a random disconnect (often a TCP reset) at a random step. A valid ICReq or admin Connect
 * that gets no answer within {@link #ANSWER_MS} is a hang. Before and after the run the {@link Probe} reads the
 * target's heap after GC, direct memory, threads, fds and controllers; after, the run waits for them to come
 * back to the baseline (within the soak's tolerances). Exit status 1 on a verify error, a hang or a leak.
 *
 * <pre>
 * LiveFuzz --port P [--address A] [--subnqn NQN] [--verify-subnqn NQN] [--duration S] [--seed S] [--workers N]
 *          [--pid PID] [--api http://127.0.0.1:PORT --token-file FILE]
 * </pre>
 */
public final class LiveFuzz {
    static final int ANSWER_MS = 10_000;
    private static final int CC_ENABLE = 0x460001;
    private static final int MAX_PDU = 16384;
    private static final String[] SCENARIOS = {"mutated-admin", "mutated-io", "truncated", "h2c-chaos",
        "keep-alive-flood", "aer-flood", "many-queues", "connect-storm", "bad-icreq"};

    /** What to fuzz, where the verifying host writes, and for how long. */
    public record Options(String address, int port, String subnqn, String hostnqn, String verifySubnqn,
                          String verifyHostnqn, int verifyNsid, long seconds, long seed, int workers) {
    }

    /** Counts, for the summary. */
    public static final class Counters {
        public final LongAdder cases = new LongAdder();
        public final LongAdder pdus = new LongAdder();
        public final LongAdder connections = new LongAdder();
        public final LongAdder succeeded = new LongAdder();
        public final LongAdder errorStatus = new LongAdder();
        public final LongAdder terminations = new LongAdder();
        public final LongAdder closedByTarget = new LongAdder();
        public final LongAdder resets = new LongAdder();
        public final LongAdder hangs = new LongAdder();
        public final LongAdder[] perScenario = new LongAdder[SCENARIOS.length];
        public final LongAdder verifyIos = new LongAdder();
        public final LongAdder verifyErrors = new LongAdder();
        public final LongAdder reconnects = new LongAdder();
        public final LongAdder apiMutations = new LongAdder();
        final List<String> firstProblems = new ArrayList<>();

        Counters() {
            Arrays.setAll(perScenario, i -> new LongAdder());
        }

        synchronized void problem(String p) {
            if (firstProblems.size() < 20) {
                firstProblems.add(p);
            }
        }

        public synchronized List<String> problems() {
            return List.copyOf(firstProblems);
        }

        String scenarios() {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < SCENARIOS.length; i++) {
                sb.append(i == 0 ? "" : ", ").append(SCENARIOS[i]).append(' ').append(perScenario[i].sum());
            }
            return sb.toString();
        }
    }

    private final Options o;
    private final Counters c = new Counters();
    private final AtomicBoolean stop = new AtomicBoolean();
    private int reconnectSeconds;
    private String api;
    private String token;

    public LiveFuzz(Options o) {
        this.o = o;
    }

    /**
     * The mixed soak's extras: the verifying host reconnects every {@code reconnectSeconds} (0: never), and with
     * {@code api} and {@code token} a thread changes the configuration through the REST API all along (a bdev
     * and a namespace of it added to and removed from the verify subsystem, a host allowed and removed), each
     * change answered 2xx or counted as a problem.
     */
    public LiveFuzz soak(int reconnectSeconds, String api, String token) {
        this.reconnectSeconds = reconnectSeconds;
        this.api = api;
        this.token = token;
        return this;
    }

    public Counters counters() {
        return c;
    }

    /** Runs the workers and the verifying host for the duration; returns when all have stopped. */
    public Counters run(PrintStream out) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        Thread verify = null;
        if (o.verifySubnqn() != null) {
            verify = new Thread(this::verify, "live-fuzz-verify");
            verify.start();
        }
        if (api != null && o.verifySubnqn() != null) {
            Thread t = new Thread(this::apiMutations, "live-fuzz-api");
            threads.add(t);
            t.start();
        }
        for (int w = 0; w < o.workers(); w++) {
            long workerSeed = Tries.seed(o.seed(), w);
            Thread t = new Thread(() -> worker(workerSeed), "live-fuzz-" + w);
            threads.add(t);
            t.start();
        }
        long start = System.nanoTime();
        long end = start + o.seconds() * 1_000_000_000L;
        while (System.nanoTime() < end) {
            Thread.sleep(Math.min(10_000, Math.max(1, (end - System.nanoTime()) / 1_000_000)));
            out.printf("live-fuzz: %d s: %d cases, %d connections, %d PDUs, %d hangs; verify %d I/Os, %d errors%n",
                (System.nanoTime() - start) / 1_000_000_000L, c.cases.sum(), c.connections.sum(), c.pdus.sum(),
                c.hangs.sum(), c.verifyIos.sum(), c.verifyErrors.sum());
        }
        stop.set(true);
        for (Thread t : threads) {
            t.join(60_000);
        }
        if (verify != null) {
            verify.join(60_000);
        }
        return c;
    }

    // ---------------------------------------------------------------- baseline figures

    /** What a leak would grow, read from the target. */
    public record Figures(long heapAfterGc, long direct, int threads, int fds, int controllers) {
        @Override
        public String toString() {
            return String.format(java.util.Locale.ROOT, "heap after GC %,d B, direct %,d B, threads %d, open fds %d, "
                + "controllers %d", heapAfterGc, direct, threads, fds, controllers);
        }

        /** What grew beyond the soak's tolerances (heap 32 MiB, direct 16 MiB, 2 threads, 4 fds, no controller). */
        public List<String> leaksSince(Figures before) {
            List<String> p = new ArrayList<>();
            grew(p, "heap after GC", before.heapAfterGc, heapAfterGc, 32L << 20);
            grew(p, "direct memory", before.direct, direct, 16L << 20);
            grew(p, "threads", before.threads, threads, 2);
            grew(p, "open fds", before.fds, fds, 4);
            grew(p, "controllers", before.controllers, controllers, 0);
            return p;
        }

        private static void grew(List<String> p, String name, long before, long after, long tolerance) {
            if (after - before > tolerance) {
                p.add(name + " grew from " + before + " to " + after + " (tolerance " + tolerance + ")");
            }
        }
    }

    /** Reads {@link Figures} from the target. */
    @FunctionalInterface
    public interface Probe {
        Figures read() throws IOException, InterruptedException;
    }

    /**
     * The figures of a target in another process: threads and fds from /proc/PID, a full GC through jcmd, heap,
     * direct memory and controllers from the service's Prometheus scrape (/metrics with the API token).
     */
    static Probe processProbe(long pid, String api, String token) {
        return () -> {
            new ProcessBuilder("jcmd", Long.toString(pid), "GC.run").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
            String status = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/" + pid + "/status"));
            int threads = Integer.parseInt(status.replaceAll("(?s).*\nThreads:\\s*(\\d+).*", "$1"));
            int fds;
            try (var l = java.nio.file.Files.list(java.nio.file.Path.of("/proc/" + pid + "/fd"))) {
                fds = (int) l.count();
            }
            java.net.http.HttpResponse<String> m = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(api + "/metrics"))
                    .header("Authorization", "Bearer " + token).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
            long heap = 0;
            long direct = 0;
            int controllers = 0;
            for (String line : m.body().split("\n")) {
                if (line.startsWith("#")) {
                    continue;
                }
                double v = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                if (line.startsWith("jvm_memory_used_bytes{area=\"heap\"")) {
                    heap += (long) v;
                } else if (line.startsWith("jvm_buffer_memory_used_bytes{id=\"direct\"}")) {
                    direct = (long) v;
                } else if (line.startsWith("nvmf_subsystem_controllers{")) {
                    controllers += (int) v;
                }
            }
            return new Figures(heap, direct, threads, fds, controllers);
        };
    }

    /**
     * Figures before, the run, then figures after (polled for up to 30 s while controllers of vanished connections
     * time out and pools settle); prints the summary and returns the problems (empty: clean).
     */
    public static List<String> runAndCompare(Options o, Probe probe, PrintStream out) throws Exception {
        return runAndCompare(new LiveFuzz(o), probe, out);
    }

    /** As {@link #runAndCompare(Options, Probe, PrintStream)} with a configured fuzzer (e.g. {@link #soak}). */
    public static List<String> runAndCompare(LiveFuzz f, Probe probe, PrintStream out) throws Exception {
        Options o = f.o;
        Figures before = probe == null ? null : probe.read();
        if (before != null) {
            out.println("live-fuzz: before: " + before);
        }
        long start = System.nanoTime();
        Counters c = f.run(out);
        double secs = (System.nanoTime() - start) / 1e9;
        List<String> problems = new ArrayList<>(c.problems());
        out.printf(java.util.Locale.ROOT, "live-fuzz: %d cases in %.0f s (seed %d, %d workers): %s%n", c.cases.sum(),
            secs, o.seed(), o.workers(), c.scenarios());
        out.printf(java.util.Locale.ROOT, "live-fuzz: %d connections opened, %d PDUs sent; answers: %d successes, "
            + "%d error statuses, %d C2HTermReqs, %d connections closed by the target, %d reset by the fuzzer; "
            + "%d hangs%n", c.connections.sum(), c.pdus.sum(), c.succeeded.sum(), c.errorStatus.sum(),
            c.terminations.sum(), c.closedByTarget.sum(), c.resets.sum(), c.hangs.sum());
        if (o.verifySubnqn() != null) {
            out.printf("live-fuzz: verifying host: %d I/Os (write, read back, compare), %d reconnects, %d errors;"
                + " %d API changes%n", c.verifyIos.sum(), c.reconnects.sum(), c.verifyErrors.sum(),
                c.apiMutations.sum());
            if (c.verifyIos.sum() == 0) {
                problems.add("the verifying host did no I/O");
            }
        }
        if (before != null) {
            Figures after = probe.read();
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (!after.leaksSince(before).isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(1000);
                after = probe.read();
            }
            out.println("live-fuzz: after:  " + after);
            problems.addAll(after.leaksSince(before));
        }
        problems.forEach(p -> out.println("live-fuzz: PROBLEM: " + p));
        out.println("live-fuzz: " + (problems.isEmpty() ? "clean" : problems.size() + " problem(s)"));
        return problems;
    }

    /** See the class comment for the options; exit 0 clean, 1 on a problem, 2 on a usage error. */
    public static void main(String[] args) throws Exception {
        String address = "127.0.0.1";
        int port = -1;
        String subnqn = null;
        String hostnqn = "nqn.2014-08.org.nvmexpress:uuid:6e7a9b10-1f2e-4c3d-8a5b-00000000f022";
        String verifySubnqn = null;
        String verifyHostnqn = "nqn.2014-08.org.nvmexpress:uuid:6e7a9b10-1f2e-4c3d-8a5b-00000000f033";
        int verifyNsid = 1;
        long seconds = 60;
        long seed = System.nanoTime();
        int workers = 4;
        long pid = -1;
        String api = null;
        String tokenFile = null;
        int reconnect = 0;
        boolean apiChanges = false;
        try {
            for (int i = 0; i < args.length; i++) {
                String v = i + 1 < args.length ? args[i + 1] : null;
                switch (args[i]) {
                    case "--address" -> address = args[++i];
                    case "--port" -> port = Integer.parseInt(args[++i]);
                    case "--subnqn" -> subnqn = args[++i];
                    case "--hostnqn" -> hostnqn = args[++i];
                    case "--verify-subnqn" -> verifySubnqn = args[++i];
                    case "--verify-hostnqn" -> verifyHostnqn = args[++i];
                    case "--verify-nsid" -> verifyNsid = Integer.parseInt(args[++i]);
                    case "--duration" -> seconds = Long.parseLong(args[++i]);
                    case "--seed" -> seed = Long.parseLong(args[++i]);
                    case "--workers" -> workers = Integer.parseInt(args[++i]);
                    case "--pid" -> pid = Long.parseLong(args[++i]);
                    case "--api" -> api = args[++i];
                    case "--token-file" -> tokenFile = args[++i];
                    case "--reconnect-every" -> reconnect = Integer.parseInt(args[++i]);
                    case "--api-changes" -> {
                        apiChanges = true;
                        v = "";
                    }
                    case "-h", "--help" -> throw new IllegalArgumentException("help");
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
                if (v == null) {
                    throw new IllegalArgumentException(args[i - 1] + " needs a value");
                }
            }
            if (port < 0 || (subnqn == null && workers > 0)) {
                throw new IllegalArgumentException("--port and --subnqn are required (--subnqn not with --workers 0)");
            }
            if (apiChanges && (api == null || verifySubnqn == null)) {
                throw new IllegalArgumentException("--api-changes needs --api, --token-file and --verify-subnqn");
            }
            if ((pid < 0) != (api == null) || (api == null) != (tokenFile == null)) {
                throw new IllegalArgumentException("--pid, --api and --token-file go together (the baseline figures)");
            }
        } catch (RuntimeException e) {
            System.err.println("nvmf4j-fuzz: " + e.getMessage());
            System.err.println("usage: nvmf4j-fuzz --port P --subnqn NQN [--address A] [--hostnqn NQN] [--verify-subnqn NQN"
                + " [--verify-hostnqn NQN] [--verify-nsid N]] [--duration SECONDS] [--seed S] [--workers N]"
                + " [--pid PID --api http://127.0.0.1:PORT --token-file FILE] [--reconnect-every S] [--api-changes]");
            System.exit(2);
            return;
        }
        Options o = new Options(address, port, subnqn, hostnqn, verifySubnqn, verifyHostnqn, verifyNsid, seconds, seed,
            workers);
        String token = tokenFile == null ? null : java.nio.file.Files.readString(java.nio.file.Path.of(tokenFile)).trim();
        Probe probe = pid < 0 ? null : processProbe(pid, api, token);
        System.out.println("live-fuzz: " + address + ":" + port + " " + subnqn + ", " + seconds + " s, seed " + seed);
        LiveFuzz f = new LiveFuzz(o).soak(reconnect, apiChanges ? api : null, token);
        System.exit(runAndCompare(f, probe, System.out).isEmpty() ? 0 : 1);
    }

    // ---------------------------------------------------------------- the verifying host

    /**
     * Writes seeded data, reads it back and compares, over one I/O queue, with a Keep Alive every 2 s; with
     * {@link #soak} a new controller every {@code reconnectSeconds} (the data written before is read back by it).
     */
    private void verify() {
        SplittableRandom r = new SplittableRandom(o.seed() ^ 0x5EED);
        while (!stop.get()) {
            try (NvmeController ctrl = NvmeController.open(o.address(), o.port(), o.verifySubnqn(), o.verifyHostnqn(),
                    30_000, 1, TcpHostOptions.DEFAULT)) {
                verifyOn(ctrl, r);
            } catch (IOException | RuntimeException e) {
                c.verifyErrors.increment();
                c.problem("verify: " + e);
                return;
            }
            if (!stop.get()) {
                c.reconnects.increment();
            }
        }
    }

    private void verifyOn(NvmeController ctrl, SplittableRandom r) {
        NvmeHost io = ctrl.io(0);
        long start = System.nanoTime();
        long lastKeepAlive = start;
        while (!stop.get() && (reconnectSeconds == 0 || System.nanoTime() - start < reconnectSeconds * 1_000_000_000L)) {
            int blocks = 1 + r.nextInt(64);
            long slba = r.nextInt(8192 - blocks);
            byte[] data = new byte[blocks * 512];
            r.nextBytes(data);
            Completion w = io.write(o.verifyNsid(), slba, data);
            Completion rd = io.read(o.verifyNsid(), slba, blocks);
            c.verifyIos.add(2);
            if (!w.ok() || !rd.ok() || !Arrays.equals(rd.data(), data)) {
                c.verifyErrors.increment();
                c.problem("verify: write " + w + " read " + rd + " at LBA " + slba + " (" + blocks + " blocks)"
                    + (w.ok() && rd.ok() ? ": data differs" : ""));
            }
            if (System.nanoTime() - lastKeepAlive > 2_000_000_000L) {
                Completion ka = ctrl.admin().execute(Sqe.of(NvmeHost.OPC_KEEP_ALIVE));
                if (!ka.ok()) {
                    c.verifyErrors.increment();
                    c.problem("verify: Keep Alive " + ka);
                }
                lastKeepAlive = System.nanoTime();
            }
        }
    }

    /** Configuration changes through the REST API on the verify subsystem, until stopped (see {@link #soak}). */
    private void apiMutations() {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        String sub = api + "/api/v1/subsystems/" + java.net.URLEncoder.encode(o.verifySubnqn(),
            java.nio.charset.StandardCharsets.UTF_8);
        String host = "nqn.2014-08.org.nvmexpress:uuid:6e7a9b10-1f2e-4c3d-8a5b-00000000f044";
        for (long i = 0; !stop.get(); i++) {
            String bdev = "live-fuzz-soak" + (i % 2);
            try {
                call(http, "POST", api + "/api/v1/bdevs", "{\"name\":\"" + bdev + "\",\"type\":\"null\","
                    + "\"blockSize\":512,\"numBlocks\":2048}", 201);
                String ns = call(http, "POST", sub + "/namespaces", "{\"bdev\":\"" + bdev + "\"}", 201);
                int nsid = Integer.parseInt(ns.replaceAll("(?s).*\"nsid\"\\s*:\\s*(\\d+).*", "$1"));
                call(http, "POST", sub + "/hosts", "{\"nqn\":\"" + host + "\"}", 201);
                sleep(200);
                call(http, "DELETE", sub + "/hosts/" + java.net.URLEncoder.encode(host,
                    java.nio.charset.StandardCharsets.UTF_8), null, 204);
                call(http, "DELETE", sub + "/namespaces/" + nsid, null, 204);
                call(http, "DELETE", api + "/api/v1/bdevs/" + bdev, null, 204);
            } catch (IOException | RuntimeException e) {
                c.problem("API mutation: " + e.getMessage());
                c.verifyErrors.increment();
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            sleep(300);
        }
    }

    private String call(java.net.http.HttpClient http, String method, String url, String body, int expected)
        throws IOException, InterruptedException {
        java.net.http.HttpRequest.Builder b = java.net.http.HttpRequest.newBuilder(java.net.URI.create(url))
            .timeout(java.time.Duration.ofSeconds(30)).header("Authorization", "Bearer " + token)
            .method(method, body == null ? java.net.http.HttpRequest.BodyPublishers.noBody()
                : java.net.http.HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        java.net.http.HttpResponse<String> r = http.send(b.build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != expected) {
            throw new IOException(method + " " + url + ": " + r.statusCode() + " " + r.body());
        }
        c.apiMutations.increment();
        return r.body();
    }

    // ---------------------------------------------------------------- the fuzzing workers

    private void worker(long seed) {
        for (long i = 0; !stop.get(); i++) {
            long caseSeed = Tries.seed(seed, i);
            int scenario = new SplittableRandom(caseSeed).nextInt(SCENARIOS.length);
            try {
                runCase(caseSeed);
            } catch (Hang h) {
                c.hangs.increment();
                c.problem("hang in " + SCENARIOS[scenario] + " (case seed " + caseSeed + "): " + h.getMessage());
            } catch (IOException e) {
                // the target closed or reset the connection: an answer to bad input, counted below
            }
            c.cases.increment();
            c.perScenario[scenario].increment();
        }
    }

    /** One case: a scenario on fresh connections, all closed at the end. Replays from its seed. */
    public void runCase(long seed) throws IOException {
        SplittableRandom r = new SplittableRandom(seed);
        int scenario = r.nextInt(SCENARIOS.length);
        List<Conn> conns = new ArrayList<>();
        // a random step at which everything is dropped (-1: none); steps count PDUs sent
        int cut = r.nextInt(4) == 0 ? r.nextInt(40) : -1;
        try {
            switch (scenario) {
                case 0 -> mutatedAdmin(r, conns, cut);
                case 1 -> mutatedIo(r, conns, cut);
                case 2 -> truncated(r, conns);
                case 3 -> h2cChaos(r, conns, cut);
                case 4 -> keepAliveFlood(r, conns, cut);
                case 5 -> aerFlood(r, conns);
                case 6 -> manyQueues(r, conns);
                case 7 -> connectStorm(r, conns);
                default -> badIcReq(r, conns);
            }
        } catch (Cut done) {
            // the random disconnect happened
        } finally {
            boolean reset = r.nextBoolean();
            for (Conn k : conns) {
                k.close(reset);
            }
        }
    }

    private static final class Cut extends RuntimeException {
        Cut() {
            super(null, null, false, false);
        }
    }

    private static final class Hang extends IOException {
        Hang(String what) {
            super(what);
        }
    }

    private void mutatedAdmin(SplittableRandom r, List<Conn> conns, int cut) throws IOException {
        Conn a = admin(conns, cut);
        int n = 1 + r.nextInt(12);
        for (int i = 0; i < n && a.open; i++) {
            byte[][] t = adminTemplate(r);
            a.send(r.nextInt(4) == 0 ? PduCodec.encode(Pdu.CAPSULE_CMD, 0, t[0], t[1], false, false)
                : mutatedCapsule(r, t[0], t[1]));
            a.drain(r.nextInt(3) == 0 ? 20 : 0);
        }
        a.drain(50);
    }

    private void mutatedIo(SplittableRandom r, List<Conn> conns, int cut) throws IOException {
        Conn q = ioQueue(conns, cut, admin(conns, cut), 1);
        int n = 1 + r.nextInt(12);
        for (int i = 0; i < n && q.open; i++) {
            byte[][] t = ioTemplate(r, q);
            q.send(r.nextInt(4) == 0 ? PduCodec.encode(t[2] == null ? Pdu.CAPSULE_CMD : t[2][0], 0, t[0], t[1], false,
                false) : mutatedCapsule(r, t[0], t[1], t[2] == null ? Pdu.CAPSULE_CMD : t[2][0]));
            q.drain(r.nextInt(3) == 0 ? 20 : 0);
        }
        q.drain(50);
    }

    private void truncated(SplittableRandom r, List<Conn> conns) throws IOException {
        Conn a = admin(conns, -1);
        Conn target = r.nextBoolean() ? a : ioQueue(conns, -1, a, 1);
        byte[][] t = target == a ? adminTemplate(r) : ioTemplate(r, target);
        byte[] pdu = PduCodec.encode(t[2] == null ? Pdu.CAPSULE_CMD : t[2][0], 0, t[0], t[1], false, false);
        int at = r.nextInt(pdu.length);
        target.send(Arrays.copyOf(pdu, at));
        if (r.nextBoolean()) {
            sleep(r.nextInt(200));
            target.send(Arrays.copyOfRange(pdu, at, pdu.length));
            target.drain(50);
        }
    }

    private void h2cChaos(SplittableRandom r, List<Conn> conns, int cut) throws IOException {
        Conn q = ioQueue(conns, cut, admin(conns, cut), 1);
        int len = 16384 + 512 * r.nextInt(64); // beyond the in-capsule size: the target asks with R2T
        int cid = 20 + r.nextInt(8);
        q.send(PduCodec.encode(Pdu.CAPSULE_CMD, 0, Sqe.of(NvmeHost.OPC_WRITE).cid(cid).nsid(1)
            .cdw(10, r.nextInt(4096)).cdw(12, len / 512 - 1).sgl(Sqe.SGL_TRANSPORT, 0, len).toBytes(), null, false,
            false));
        q.drain(30);
        int ttag = q.r2tTtag;
        int tagCid = q.r2tCccid;
        int off = q.r2tOffset;
        int l = Math.max(1, q.r2tLength);
        int n = 1 + r.nextInt(6);
        for (int i = 0; i < n && q.open; i++) {
            int kind = r.nextInt(7);
            int pTtag = kind == 0 ? r.nextInt(0x10000) : ttag;
            int pCid = kind == 1 ? r.nextInt(0x10000) : tagCid;
            int pOff = kind == 2 ? off + l / 2 : kind == 3 ? off + r.nextInt(l + 4096) : off;
            int pLen = kind == 4 ? l + 512 * (1 + r.nextInt(8)) : kind == 2 ? l - l / 2 : Math.min(l, 8192);
            int flags = kind == 5 ? 0 : Pdu.FLAG_LAST_PDU;
            byte[] psh = new byte[16];
            putLe(psh, 0, pCid, 2);
            putLe(psh, 2, pTtag, 2);
            putLe(psh, 4, pOff, 4);
            putLe(psh, 8, pLen, 4);
            byte[] data = new byte[Math.max(0, Math.min(pLen, MAX_PDU))];
            r.nextBytes(data);
            q.send(PduCodec.encode(Pdu.H2C_DATA, flags, psh, data, false, false));
            q.drain(r.nextInt(3) == 0 ? 20 : 0);
        }
        q.drain(50);
    }

    private void keepAliveFlood(SplittableRandom r, List<Conn> conns, int cut) throws IOException {
        Conn a = admin(conns, cut);
        int n = 200 + r.nextInt(2000);
        java.io.ByteArrayOutputStream batch = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < n; i++) {
            batch.writeBytes(PduCodec.encode(Pdu.CAPSULE_CMD, 0, Sqe.of(NvmeHost.OPC_KEEP_ALIVE).cid(100 + i % 32)
                .toBytes(), null, false, false));
        }
        a.send(batch.toByteArray());
        a.drain(100);
    }

    private void aerFlood(SplittableRandom r, List<Conn> conns) throws IOException {
        Conn a = admin(conns, -1);
        int n = 4 + r.nextInt(64);
        for (int i = 0; i < n && a.open; i++) {
            a.send(PduCodec.encode(Pdu.CAPSULE_CMD, 0, Sqe.of(NvmeHost.OPC_ASYNC_EVENT_REQUEST).cid(200 + i)
                .toBytes(), null, false, false));
        }
        a.drain(100);
    }

    private void manyQueues(SplittableRandom r, List<Conn> conns) throws IOException {
        Conn a = admin(conns, -1);
        int asked = r.nextInt(4) == 0 ? 0xFFFE : r.nextInt(16);
        a.send(PduCodec.encode(Pdu.CAPSULE_CMD, 0, Sqe.of(NvmeHost.OPC_SET_FEATURES).cid(3)
            .cdw(10, NvmeController.FID_NUMBER_OF_QUEUES).cdw(11, asked | (asked << 16)).toBytes(), null, false, false));
        a.drain(30);
        int n = 2 + r.nextInt(40);
        for (int i = 0; i < n && a.open; i++) {
            int qid = r.nextInt(5) == 0 ? 1 + r.nextInt(Math.max(1, i)) : i + 1; // some duplicates
            Conn q = connect(conns, -1);
            q.send(connectPdu(qid, 31 + r.nextInt(4) * 32, a.cntlid, 0));
            q.awaitAnswer("I/O queue " + qid + " Connect");
        }
    }

    private void connectStorm(SplittableRandom r, List<Conn> conns) throws IOException {
        int n = 8 + r.nextInt(40);
        for (int i = 0; i < n; i++) {
            Conn k = connect(conns, -1);
            k.send(connectPdu(0, 31, 0xFFFF, r.nextInt(2) == 0 ? 0 : 1000 + r.nextInt(30_000)));
        }
        for (Conn k : conns) {
            k.awaitAnswer("admin Connect in a storm");
        }
    }

    private void badIcReq(SplittableRandom r, List<Conn> conns) throws IOException {
        Conn k = new Conn(o, c, -1);
        conns.add(k);
        switch (r.nextInt(3)) {
            case 0 -> k.send(Mutator.mutate(icReq(), r, 256));
            case 1 -> {
                k.send(icReq());
                k.send(icReq());
            }
            default -> k.send(connectPdu(0, 31, 0xFFFF, 0));
        }
        k.drain(50);
    }

    // ---------------------------------------------------------------- sessions

    private Conn connect(List<Conn> conns, int cut) throws IOException {
        Conn k = new Conn(o, c, cut);
        conns.add(k);
        k.send(icReq());
        Pdu p = k.read(ANSWER_MS);
        if (p == null || p.type() != Pdu.IC_RESP) {
            if (k.open) {
                throw new Hang("no ICResp to a valid ICReq within " + ANSWER_MS + " ms (got " + p + ")");
            }
            throw new EOFException("closed before ICResp");
        }
        return k;
    }

    /** An admin queue: ICReq, Connect (dynamic cntlid), CC.EN. */
    private Conn admin(List<Conn> conns, int cut) throws IOException {
        Conn a = connect(conns, cut);
        a.send(connectPdu(0, 31, 0xFFFF, 30_000));
        a.awaitAnswer("admin Connect");
        if (a.cntlid < 0) {
            throw new IOException("admin Connect refused");
        }
        a.send(PduCodec.encode(Pdu.CAPSULE_CMD, 0, Sqe.fabrics(NvmeHost.FCTYPE_PROPERTY_SET).cid(2).u32(44,
            NvmeHost.PROP_CC).u64(48, CC_ENABLE).toBytes(), null, false, false));
        a.awaitAnswer("Property Set CC");
        return a;
    }

    private Conn ioQueue(List<Conn> conns, int cut, Conn admin, int qid) throws IOException {
        Conn q = connect(conns, cut);
        q.send(connectPdu(qid, 127, admin.cntlid, 0));
        q.awaitAnswer("I/O queue Connect");
        return q;
    }

    private byte[] icReq() {
        byte[] psh = new byte[120];
        return PduCodec.encode(Pdu.IC_REQ, 0, psh, null, false, false);
    }

    private byte[] connectPdu(int qid, int sqsize, int cntlid, int katoMs) {
        byte[] hostid = NvmeController.hostIdFor(o.hostnqn());
        return PduCodec.encode(Pdu.CAPSULE_CMD, 0, NvmeHost.connectCommand(qid, sqsize, 0, katoMs).cid(1)
            .sgl(Sqe.SGL_IN_CAPSULE, 0, NvmeHost.CONNECT_DATA_SIZE).toBytes(),
            NvmeHost.connectData(hostid, cntlid, o.subnqn(), o.hostnqn()), false, false);
    }

    private static byte[] mutatedCapsule(SplittableRandom r, byte[] sqe, byte[] data) {
        return mutatedCapsule(r, sqe, data, Pdu.CAPSULE_CMD);
    }

    /** The SQE and data mutated before framing, or the framed PDU after. */
    private static byte[] mutatedCapsule(SplittableRandom r, byte[] sqe, byte[] data, int type) {
        if (r.nextBoolean()) {
            byte[] m = Mutator.mutate(sqe, r, sqe.length);
            byte[] d = data == null || r.nextBoolean() ? data : Mutator.mutate(data, r, MAX_PDU);
            return PduCodec.encode(type, 0, Arrays.copyOf(m, sqe.length), d, false, false);
        }
        return Mutator.mutate(PduCodec.encode(type, 0, sqe, data, false, false), r, MAX_PDU);
    }

    /** SQE and in-capsule data (or null). */
    private static byte[][] adminTemplate(SplittableRandom r) {
        int cid = 10 + r.nextInt(8);
        Sqe s = switch (r.nextInt(12)) {
            case 0 -> Sqe.of(NvmeHost.OPC_IDENTIFY).cdw(10, r.nextInt(4)).sgl(Sqe.SGL_TRANSPORT, 0, 4096);
            case 1 -> Sqe.of(NvmeHost.OPC_GET_LOG_PAGE).nsid(-1).cdw(10, (1 + r.nextInt(5)) | (127 << 16))
                .sgl(Sqe.SGL_TRANSPORT, 0, 512);
            case 2 -> Sqe.of(NvmeHost.OPC_GET_FEATURES).cdw(10, r.nextInt(16));
            case 3 -> Sqe.of(NvmeHost.OPC_SET_FEATURES).cdw(10, 7).cdw(11, 0x00030003);
            case 4 -> Sqe.of(NvmeHost.OPC_KEEP_ALIVE);
            case 5 -> Sqe.of(NvmeHost.OPC_ASYNC_EVENT_REQUEST);
            case 6 -> Sqe.of(NvmeHost.OPC_ABORT).cdw(10, r.nextInt(32) << 16);
            case 7 -> Sqe.fabrics(NvmeHost.FCTYPE_PROPERTY_GET).u8(40, 1).u32(44, 0);
            case 8 -> Sqe.fabrics(NvmeHost.FCTYPE_PROPERTY_SET).u32(44, 0x14).u64(48, r.nextBoolean() ? 0 : CC_ENABLE);
            case 9 -> Sqe.of(NvmeHost.OPC_SET_FEATURES).cdw(10, 0x0B).cdw(11, r.nextInt());
            case 10 -> Sqe.of(NvmeHost.OPC_GET_LOG_PAGE).nsid(-1).cdw(10, 0x0C | (1023 << 16))
                .sgl(Sqe.SGL_TRANSPORT, 0, 4096);
            default -> Sqe.of(r.nextInt(256)).sgl(Sqe.SGL_TRANSPORT, 0, 4096);
        };
        return new byte[][] {s.cid(cid).toBytes(), null, null};
    }

    /** SQE, in-capsule data (or null), and for a non-capsule PDU {type}. */
    private static byte[][] ioTemplate(SplittableRandom r, Conn q) {
        int cid = 10 + r.nextInt(8);
        int nsid = r.nextInt(8) == 0 ? r.nextInt(5) : 1;
        int slba = r.nextInt(4096);
        int nlb = r.nextInt(16);
        int len = (nlb + 1) * 512;
        byte[] data = new byte[len];
        r.nextBytes(data);
        return switch (r.nextInt(9)) {
            case 0 -> new byte[][] {Sqe.of(NvmeHost.OPC_WRITE).cid(cid).nsid(nsid).cdw(10, slba).cdw(12, nlb)
                .sgl(Sqe.SGL_IN_CAPSULE, 0, len).toBytes(), data, null};
            case 1 -> new byte[][] {Sqe.of(NvmeHost.OPC_WRITE).cid(cid).nsid(nsid).cdw(10, slba).cdw(12, nlb)
                .sgl(Sqe.SGL_TRANSPORT, 0, len).toBytes(), null, null};
            case 2, 3 -> new byte[][] {Sqe.of(NvmeHost.OPC_READ).cid(cid).nsid(nsid).cdw(10, slba).cdw(12, nlb)
                .sgl(Sqe.SGL_TRANSPORT, 0, len).toBytes(), null, null};
            case 4 -> new byte[][] {Sqe.of(NvmeHost.OPC_FLUSH).cid(cid).nsid(nsid).toBytes(), null, null};
            case 5 -> new byte[][] {Sqe.of(NvmeHost.OPC_WRITE_ZEROES).cid(cid).nsid(nsid).cdw(10, slba).cdw(12, nlb)
                .toBytes(), null, null};
            case 6 -> {
                byte[] d = new byte[16];
                putLe(d, 4, 1 + r.nextInt(64), 4);
                putLe(d, 8, r.nextInt(4096), 8);
                yield new byte[][] {Sqe.of(NvmeHost.OPC_DSM).cid(cid).nsid(nsid).cdw(11, 4)
                    .sgl(Sqe.SGL_IN_CAPSULE, 0, 16).toBytes(), d, null};
            }
            case 7 -> new byte[][] {Sqe.of(NvmeHost.OPC_COMPARE).cid(cid).nsid(nsid).cdw(10, slba).cdw(12, nlb)
                .sgl(Sqe.SGL_IN_CAPSULE, 0, len).toBytes(), data, null};
            default -> {
                byte[] psh = new byte[16];
                putLe(psh, 0, q.r2tCccid, 2);
                putLe(psh, 2, q.r2tTtag, 2);
                putLe(psh, 4, q.r2tOffset, 4);
                int l = Math.max(1, Math.min(q.r2tLength, 8192));
                putLe(psh, 8, l, 4);
                byte[] d = new byte[l];
                r.nextBytes(d);
                yield new byte[][] {psh, d, {(byte) Pdu.H2C_DATA}};
            }
        };
    }

    private static void putLe(byte[] b, int at, long v, int width) {
        for (int i = 0; i < width; i++) {
            b[at + i] = (byte) (v >>> (8 * i));
        }
    }

    private static void sleep(int ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One connection of the fuzzer: what it sends, and what it learns from the target's PDUs. */
    private static final class Conn {
        private final Socket s;
        private final OutputStream out;
        private final DataInputStream in;
        private final Counters c;
        private final int cut;
        private int sent;
        boolean open = true;
        int cntlid = -1;
        int r2tCccid;
        int r2tTtag;
        int r2tOffset;
        int r2tLength;

        Conn(Options o, Counters c, int cut) throws IOException {
            this.c = c;
            this.cut = cut;
            s = new Socket();
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(o.address(), o.port()), ANSWER_MS);
            out = s.getOutputStream();
            in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
            c.connections.increment();
        }

        void send(byte[] pdu) throws IOException {
            if (!open) {
                return;
            }
            if (sent++ == cut) {
                throw new Cut();
            }
            try {
                out.write(pdu);
                out.flush();
                c.pdus.increment();
            } catch (IOException e) {
                closedByTarget();
            }
        }

        /** The next PDU within {@code ms}, or null (timeout or closed; {@link #open} tells which). */
        Pdu read(int ms) throws IOException {
            if (!open) {
                return null;
            }
            try {
                s.setSoTimeout(Math.max(1, ms));
                Pdu p = PduCodec.read(in);
                note(p);
                return p;
            } catch (SocketTimeoutException e) {
                return null;
            } catch (IOException e) {
                closedByTarget();
                return null;
            }
        }

        /** Reads PDUs until one is a CapsuleResp or a termination; a live connection without either is a hang. */
        void awaitAnswer(String what) throws IOException {
            long deadline = System.nanoTime() + ANSWER_MS * 1_000_000L;
            while (open) {
                long left = (deadline - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    throw new Hang("no answer to " + what + " within " + ANSWER_MS + " ms");
                }
                Pdu p = read((int) left);
                if (p != null && (p.type() == Pdu.CAPSULE_RESP || p.type() == Pdu.C2H_TERM_REQ)) {
                    return;
                }
            }
        }

        /** Reads whatever arrives until {@code quietMs} pass without a PDU. */
        void drain(int quietMs) throws IOException {
            while (open && read(quietMs) != null) {
                // note() did the work
            }
        }

        private void note(Pdu p) {
            switch (p.type()) {
                case Pdu.CAPSULE_RESP -> {
                    int status = p.u16(8 + 14) >>> 1;
                    if ((status & 0x7FF) == 0) {
                        c.succeeded.increment();
                        if (cntlid < 0 && p.u16(8 + 12) == 1) {
                            cntlid = p.u16(8);
                        }
                    } else {
                        c.errorStatus.increment();
                    }
                }
                case Pdu.C2H_TERM_REQ -> c.terminations.increment();
                case Pdu.R2T -> {
                    r2tCccid = p.u16(8);
                    r2tTtag = p.u16(10);
                    r2tOffset = (int) p.u32(12);
                    r2tLength = (int) p.u32(16);
                }
                default -> {
                }
            }
        }

        private void closedByTarget() {
            if (open) {
                open = false;
                c.closedByTarget.increment();
            }
        }

        void close(boolean reset) {
            try {
                if (reset) {
                    s.setSoLinger(true, 0);
                    c.resets.increment();
                }
                s.close();
            } catch (IOException e) {
                // closing anyway
            }
            open = false;
        }
    }
}
