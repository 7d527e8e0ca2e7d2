package io.nvmf4j.service;

import io.nvmf4j.testhost.FreePorts;
import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.bdev.ScratchMounts;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.service.api.Http;
import io.nvmf4j.service.api.TestService;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * kill -9 of the service (java engine) at random moments of volume changes on a reflink-dir pool on a real XFS
 * ({@code reflink=1}; root): {@value #THREADS} clients create, snapshot, clone, grow and delete volumes over REST, each
 * on volumes of its own, while the test SIGKILLs the process after a random delay, restarts it and checks that the
 * service starts; that the listing agrees with the pool's directory (each volume and snapshot has its file, of its
 * size, no other file is left, every clone's snapshot is there); that every change a client saw acknowledged holds
 * and nothing else does but the one call each client had in flight; and that the files occupy what the listing says
 * (du against the sum of allocated bytes), so no space leaks. A create, snapshot or clone the kill left uncommitted
 * then succeeds when retried (the start removed what it had made), except that an uncommitted clone's snapshot, when
 * nothing else was cloned from it, is deleted instead (it must be deletable). At the end everything is deleted and
 * the pool's used bytes return to those of the empty pool. The kill delays are drawn from a range scaled by how long
 * a call took in a first burst without a kill, so that kills land among the calls. The seed is printed
 * ({@code -Dnvmf4j.killLoop.seed=N} repeats the random choices; the timing and the threads' interleaving are the
 * machine's). The same loop runs, with fewer rounds, on the spdk engine's lvol pool on a file bdev (its own checks in
 * {@link Lvol}).
 */
@Timeout(value = 1200, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class VolumeKillLoopTest {
    private static final String TOKEN = "kill-loop-token-0123456789";
    private static final int ROUNDS = 12;
    /** Rounds on the spdk engine, whose every start is SPDK's. */
    private static final int SPDK_ROUNDS = 5;
    private static final int THREADS = 4;
    /** Calls each client makes in the burst that measures how long a call takes. */
    private static final int CALIBRATION_CALLS = 6;
    private static final long MIB = 1L << 20;
    /** What a start may take on a loaded machine. */
    private static final long START_TIMEOUT_MS = 120_000;
    private static final String P = "/api/v1/pools/p";

    @TempDir
    Path dir;

    private Path state;
    private Path file;
    private Http http;
    private int apiPort;
    private ServiceProcess service;
    private int starts;
    /** The pool kind of the running loop. */
    private Medium medium;

    @Test
    void kill9AtRandomMomentsOfChangesToAReflinkDirPoolLeavesTheAcknowledgedPoolWithoutLeftoversOrLeakedSpace()
        throws Exception {
        ScratchMounts.assumeRoot();
        try (ScratchMounts mounts = new ScratchMounts(dir)) {
            Path fs = mounts.xfs(400L << 20);
            TargetConfig c = TestService.baseConfig();
            c.api.token = TOKEN;
            c.storage = StorageConfig.directories(fs.toString());
            loop(c, new ReflinkDir(Files.createDirectory(fs.resolve("pool"))), ROUNDS);
        }
    }

    /**
     * The same on the spdk engine's lvol pool on a file bdev, fewer rounds (each start is SPDK's). An lvol made by a
     * change the kill left uncommitted is removed by the start (see docs/volumes.md), so after each restart the store
     * holds exactly the document's lvols and its used clusters are the listing's allocated bytes; an lvol deleted by an
     * uncommitted delete is missing at the next start and leaves the document through the API. An lvol a start finds of
     * another size than the document's must be one of a call in flight.
     */
    @Test
    void kill9AtRandomMomentsOfChangesToAnLvolPoolLeavesTheAcknowledgedPool() throws Exception {
        SpdkRequirement.assumeBuilt();
        Path images = Files.createDirectory(dir.resolve("images"));
        TargetConfig c = SpdkRequirement.document(TestService.NQN, TOKEN, FreePorts.pick());
        c.storage = StorageConfig.directories(images.toString());
        BdevConfig f0 = new BdevConfig("f0", "file", 512, 256 * MIB / 512);
        f0.path = images.resolve("f0.img").toString();
        c.bdevs.add(f0);
        loop(c, new Lvol(), SPDK_ROUNDS);
    }

    /** Starts the service on document {@code c} with pool p on {@code medium}, runs the rounds, and stops it. */
    private void loop(TargetConfig c, Medium m, int rounds) throws Exception {
        medium = m;
        long seed = Long.getLong("nvmf4j.killLoop.seed", System.nanoTime());
        System.out.printf("kill loop on %s: seed %d (-Dnvmf4j.killLoop.seed=%<d repeats its choices)%n",
            m.getClass().getSimpleName(), seed);
        state = Files.createDirectory(dir.resolve("state"));
        file = state.resolve("config.json");
        ConfigStore.save(file, c);
        apiPort = c.api.port;
        http = new Http(apiPort, TOKEN);
        try {
            start();
            expect(201, http.post("/api/v1/pools", m.poolBody()));
            run(new Random(seed), rounds);
        } finally {
            if (service != null) {
                service.kill();
            }
        }
    }

    private void run(Random random, int rounds) throws Exception {
        long emptyUsed = used();
        List<Client> clients = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            clients.add(new Client(i, new Random(random.nextLong())));
        }
        // a burst without a kill: how long a call takes with every client busy
        List<Long> took = burst(clients, 0, CALIBRATION_CALLS);
        Collections.sort(took);
        long mean = took.stream().mapToLong(Long::longValue).sum() / took.size();
        long lo = Math.max(1, mean / 2);
        long hi = 10 * mean;
        System.out.printf("%d calls of %d clients took %d..%d ms (median %d, mean %d): kills land %d..%d ms into a"
            + " burst%n", took.size(), THREADS, ms(took.get(0)), ms(took.get(took.size() - 1)),
            ms(took.get(took.size() / 2)), ms(mean), ms(lo), ms(hi));
        check(clients, 0, "", new ArrayList<>());

        int repaired = 0;
        for (int round = 1; round <= rounds; round++) {
            long before = medium.allocated();
            long delay = lo + (long) (random.nextDouble() * (hi - lo));
            List<Thread> threads = new ArrayList<>();
            int round0 = round;
            long t0 = System.nanoTime();
            for (Client cl : clients) {
                cl.startRound(round);
                Thread t = new Thread(() -> cl.run(round0, Integer.MAX_VALUE), "client-" + cl.id);
                threads.add(t);
                t.start();
            }
            LockSupport.parkNanos(t0 + delay - System.nanoTime()); // the kill point: drawn, not waited for
            long killedAt = System.nanoTime() - t0;
            service.kill();
            for (Thread t : threads) {
                t.join(30_000);
                assertThat(t.isAlive()).as("%s ended once the service was gone", t.getName()).isFalse();
            }
            for (Client cl : clients) {
                assertThat(cl.refused).as("answers other than the expected 2xx").isEmpty();
            }
            List<String> inFlight = clients.stream().filter(cl -> cl.inFlight != null)
                .map(cl -> cl.inFlight.what()).toList();
            int acked = clients.stream().mapToInt(cl -> cl.ackedThisRound).sum();

            start();
            String log = service.output();
            Medium.Start found = medium.start(log);
            if (found.repaired()) {
                repaired++;
            }
            List<String> resolved = new ArrayList<>();
            Listing now = check(clients, round, log, resolved);
            System.out.printf("round %2d: killed %4d ms into the burst; %2d calls acknowledged; in flight %s -> %s;"
                    + " the start %s; allocated %s before, %s after, listing %s; pool used %s%n", round,
                ms(killedAt), acked, inFlight, resolved, found.summary(), mib(before), mib(medium.allocated()),
                mib(now.allocated), mib(used()));
        }
        System.out.printf("%d of %d kills left a change between its step on the medium and its commit%n", repaired,
            rounds);

        deleteEverything();
        medium.checkEmpty(emptyUsed);
    }

    /** Runs every client for {@code calls} calls; the durations of all calls, in nanoseconds. */
    private List<Long> burst(List<Client> clients, int round, int calls) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        for (Client cl : clients) {
            cl.startRound(round);
            Thread t = new Thread(() -> cl.run(round, calls), "client-" + cl.id);
            threads.add(t);
            t.start();
        }
        List<Long> took = new ArrayList<>();
        for (int i = 0; i < threads.size(); i++) {
            threads.get(i).join();
            Client cl = clients.get(i);
            assertThat(cl.refused).as("answers other than the expected 2xx").isEmpty();
            assertThat(cl.inFlight).as("a call without an answer").isNull();
            took.addAll(cl.durations);
        }
        return took;
    }

    /**
     * The checks after a restart (see the class comment), {@code log} being the start's output; each client's model
     * becomes what the pool holds. Adds to {@code resolved} what became of each call in flight at the kill. A volume
     * or snapshot the medium lacks (an uncommitted delete's) leaves the document through the API; then each call that
     * would have made something and was not committed is followed up ({@link #followUp}).
     */
    private Listing check(List<Client> clients, int round, String log, List<String> resolved)
        throws Exception {
        Listing l = listing();
        for (var e : l.volumes.entrySet()) {
            Vol v = e.getValue();
            if (v.origin() != null) {
                String[] o = v.origin().split("@");
                assertThat(l.volumes.get(o[0])).as("round %d: origin %s of clone %s", round, v.origin(), e.getKey())
                    .isNotNull();
                assertThat(l.volumes.get(o[0]).snapshots()).as("origin %s of clone %s", v.origin(), e.getKey())
                    .containsKey(o[1]);
                assertThat(l.clones.get(v.origin())).as("clones of %s", v.origin()).contains(e.getKey());
            }
        }
        Set<String> inFlight = new TreeSet<>();
        clients.stream().filter(cl -> cl.inFlight != null).forEach(cl -> inFlight.addAll(cl.inFlight.objects()));
        Set<String> lacking = medium.check(l, log, inFlight, round);
        Map<Client, Op> uncommitted = new java.util.LinkedHashMap<>();
        for (Client cl : clients) {
            SortedMap<String, Vol> held = new TreeMap<>();
            l.volumes.forEach((name, v) -> {
                if (name.startsWith(cl.prefix()) && !lacking.contains(name)) {
                    SortedMap<String, Long> snaps = new TreeMap<>(v.snapshots());
                    snaps.keySet().removeIf(s -> lacking.contains(name + "@" + s));
                    held.put(name, new Vol(v.size(), v.origin(), snaps));
                }
            });
            if (cl.inFlight == null) {
                assertThat(held).as("round %d, client %d: every acknowledged change, nothing else", round, cl.id)
                    .isEqualTo(cl.model);
            } else {
                SortedMap<String, Vol> done = cl.inFlight.apply().apply(cl.model);
                assertThat(held).as("round %d, client %d: every acknowledged change, and %s done or not", round,
                    cl.id, cl.inFlight.what()).isIn(cl.model, done);
                resolved.add(held.equals(done) ? "committed" : "not committed");
                if (!held.equals(done) && cl.inFlight.ok() == 201) {
                    uncommitted.put(cl, cl.inFlight);
                }
            }
            cl.model = held;
            cl.inFlight = null;
        }
        for (String gone : lacking) {
            int at = gone.indexOf('@');
            expect(204, http.delete(P + "/volumes/" + (at < 0 ? gone : gone.substring(0, at) + "/snapshots/"
                + gone.substring(at + 1))));
        }
        uncommitted.forEach((cl, op) -> followUp(cl, op, round, resolved));
        return lacking.isEmpty() && uncommitted.isEmpty() ? l : listing();
    }

    /** Volumes, clones by origin and allocated bytes (volumes and snapshots) as the API lists them. */
    private record Listing(SortedMap<String, Vol> volumes, Map<String, List<String>> clones, long allocated) {
    }

    private Listing listing() {
        SortedMap<String, Vol> volumes = new TreeMap<>();
        Map<String, List<String>> clones = new TreeMap<>();
        long allocated = 0;
        for (JsonNode v : expect(200, http.get(P + "/volumes")).json()) {
            String name = v.get("name").asText();
            allocated += v.get("allocatedBytes").asLong();
            SortedMap<String, Long> snaps = new TreeMap<>();
            for (JsonNode s : expect(200, http.get(P + "/volumes/" + name + "/snapshots")).json()) {
                snaps.put(s.get("name").asText(), s.get("sizeBytes").asLong());
                allocated += s.get("allocatedBytes").asLong();
                List<String> cl = new ArrayList<>();
                s.get("clones").forEach(x -> cl.add(x.asText()));
                clones.put(name + "@" + s.get("name").asText(), cl);
            }
            List<String> named = new ArrayList<>();
            v.get("snapshots").forEach(x -> named.add(x.asText()));
            assertThat(snaps.keySet()).as("snapshots of %s", name).containsExactlyInAnyOrderElementsOf(named);
            volumes.put(name, new Vol(v.get("provisionedBytes").asLong(),
                v.get("origin").isNull() ? null : v.get("origin").asText(), snaps));
        }
        return new Listing(volumes, clones, allocated);
    }

    /**
     * Deletes every volume and snapshot, leaves first (clones and volumes without snapshots, then snapshots nothing was
     * cloned from); each delete must answer 204.
     */
    private void deleteEverything() {
        for (SortedMap<String, Vol> left = listing().volumes; !left.isEmpty(); left = listing().volumes) {
            Listing l = listing();
            for (var e : left.entrySet()) {
                if (e.getValue().snapshots().isEmpty()) {
                    expect(204, http.delete(P + "/volumes/" + e.getKey()));
                    continue;
                }
                for (String s : e.getValue().snapshots().keySet()) {
                    if (l.clones.get(e.getKey() + "@" + s).isEmpty()) {
                        expect(204, http.delete(P + "/volumes/" + e.getKey() + "/snapshots/" + s));
                    }
                }
            }
        }
    }

    /**
     * A create, snapshot or clone ({@code op}) that the kill left uncommitted, after the restart: retried, and it must
     * succeed (the start removed what it had made on the medium, so its name is free); but an uncommitted clone whose
     * snapshot nothing else of the client was cloned from has that snapshot deleted instead, which must succeed too
     * (what the clone had made no longer depends on it). Adds what it did to {@code resolved}.
     */
    private void followUp(Client cl, Op op, int round, List<String> resolved) {
        String origin = op.cloneOf();
        Op next = op;
        if (origin != null && cl.model.values().stream().noneMatch(v -> origin.equals(v.origin()))) {
            int at = origin.indexOf('@');
            next = cl.deleteSnapshot(origin.substring(0, at), origin.substring(at + 1));
        }
        Http.Res r = http.send(next.method(), next.path(), next.body(), next.body() == null ? null
            : "application/json");
        assertThat(r.status()).as("round %d, client %d: %s after the restart (%s was not committed): %s", round, cl.id,
            next.what(), op.what(), r).isEqualTo(next.ok());
        cl.model = next.apply().apply(cl.model);
        resolved.add("then " + next.what());
    }

    // ------------------------------------------------------------------ the clients

    /** A volume as a client knows it: its size, the snapshot it was cloned from (or null), its snapshots' sizes. */
    record Vol(long size, String origin, SortedMap<String, Long> snapshots) {
    }

    /**
     * One REST call on {@code objects} (the volumes and {@code volume@snapshot}s whose medium it makes, changes or
     * deletes) and what it makes of the client's volumes once acknowledged with status {@code ok}.
     */
    record Op(String what, List<String> objects, String method, String path, String body, int ok,
              UnaryOperator<SortedMap<String, Vol>> apply) {
        /** The snapshot ({@code volume@snapshot}) a clone is made from, or null for any other call. */
        String cloneOf() {
            return what.startsWith("clone ") ? objects.get(1) : null;
        }
    }

    /**
     * A client changing volumes of its own (named {@code t<id>r<round>n<k>}) one call at a time, from its model of
     * them: only calls that the model says are valid, so every answer must be its 2xx.
     */
    private final class Client {
        final int id;
        final Random random;
        SortedMap<String, Vol> model = new TreeMap<>();
        /** The call sent whose answer never came (the service was killed), or null. */
        volatile Op inFlight;
        final List<String> refused = Collections.synchronizedList(new ArrayList<>());
        final List<Long> durations = new ArrayList<>();
        int ackedThisRound;
        private int round;
        private int made;

        Client(int id, Random random) {
            this.id = id;
            this.random = random;
        }

        String prefix() {
            return "t" + id + "r";
        }

        void startRound(int r) {
            round = r;
            made = 0;
            ackedThisRound = 0;
            durations.clear();
        }

        /** Makes {@code calls} calls, or fewer when the service goes away (the last one then stays in flight). */
        void run(int r, int calls) {
            for (int i = 0; i < calls; i++) {
                Op op = pick();
                inFlight = op;
                long t0 = System.nanoTime();
                Http.Res res;
                try {
                    res = http.send(op.method(), op.path(), op.body(), op.body() == null ? null : "application/json");
                } catch (RuntimeException gone) {
                    return;
                }
                durations.add(System.nanoTime() - t0);
                if (res.status() == op.ok()) {
                    model = op.apply().apply(model);
                    ackedThisRound++;
                } else {
                    refused.add("round " + r + ": " + op.what() + ": " + res);
                }
                inFlight = null;
            }
        }

        private String newName() {
            return prefix() + round + "n" + made++;
        }

        /** A random call the model says is valid (there is always one: a leaf of the lineage can go). */
        private Op pick() {
            while (true) {
                List<String> names = new ArrayList<>(model.keySet());
                String v = names.isEmpty() ? null : names.get(random.nextInt(names.size()));
                Vol vol = v == null ? null : model.get(v);
                switch (random.nextInt(6)) {
                    case 0 -> {
                        if (model.size() < 5) {
                            return create();
                        }
                    }
                    case 1 -> {
                        if (vol != null && vol.snapshots().size() < 3) {
                            return snapshot(v, vol);
                        }
                    }
                    case 2 -> {
                        if (vol != null && !vol.snapshots().isEmpty() && model.size() < 5) {
                            return cloneOf(v, vol);
                        }
                    }
                    case 3 -> {
                        if (vol != null && vol.size() < 64 * MIB) {
                            return grow(v, vol);
                        }
                    }
                    case 4 -> {
                        if (vol != null) {
                            for (String s : vol.snapshots().keySet()) {
                                if (model.values().stream().noneMatch(o -> (v + "@" + s).equals(o.origin()))) {
                                    return deleteSnapshot(v, s);
                                }
                            }
                        }
                    }
                    default -> {
                        if (vol != null && vol.snapshots().isEmpty()) {
                            return deleteVolume(v);
                        }
                    }
                }
            }
        }

        private Op create() {
            String name = newName();
            long size = (1 + random.nextInt(8)) * MIB;
            boolean thick = random.nextInt(3) == 0;
            return new Op("create " + name + (thick ? " (thick)" : ""), List.of(name), "POST", P + "/volumes",
                "{\"name\":\"" + name + "\",\"size\":" + size + (thick ? ",\"thick\":true" : "") + "}", 201,
                m -> with(m, name, new Vol(size, null, new TreeMap<>())));
        }

        private Op snapshot(String v, Vol vol) {
            String s = "s" + round + "n" + made++;
            // on lvol a snapshot changes its volume too (the volume becomes the snapshot's clone)
            return new Op("snapshot " + v + "@" + s, List.of(v + "@" + s, v), "POST",
                P + "/volumes/" + v + "/snapshots", "{\"name\":\"" + s + "\"}", 201, m -> {
                    SortedMap<String, Long> snaps = new TreeMap<>(m.get(v).snapshots());
                    snaps.put(s, m.get(v).size());
                    return with(m, v, new Vol(m.get(v).size(), m.get(v).origin(), snaps));
                });
        }

        private Op cloneOf(String v, Vol vol) {
            List<String> snaps = new ArrayList<>(vol.snapshots().keySet());
            String s = snaps.get(random.nextInt(snaps.size()));
            String name = newName();
            return new Op("clone " + v + "@" + s + " to " + name, List.of(name, v + "@" + s), "POST",
                P + "/volumes/" + v + "/snapshots/" + s + "/clone", "{\"name\":\"" + name + "\"}", 201,
                m -> with(m, name, new Vol(m.get(v).snapshots().get(s), v + "@" + s, new TreeMap<>())));
        }

        private Op grow(String v, Vol vol) {
            long size = vol.size() + (1 + random.nextInt(4)) * MIB;
            return new Op("grow " + v + " to " + size / MIB + " MiB", List.of(v), "PATCH", P + "/volumes/" + v,
                "{\"size\":" + size + "}", 200,
                m -> with(m, v, new Vol(size, m.get(v).origin(), m.get(v).snapshots())));
        }

        Op deleteSnapshot(String v, String s) {
            // on lvol the snapshot merges into the volume that depends on it
            return new Op("delete " + v + "@" + s, List.of(v + "@" + s, v), "DELETE",
                P + "/volumes/" + v + "/snapshots/" + s, null, 204, m -> {
                SortedMap<String, Long> snaps = new TreeMap<>(m.get(v).snapshots());
                snaps.remove(s);
                return with(m, v, new Vol(m.get(v).size(), m.get(v).origin(), snaps));
            });
        }

        private Op deleteVolume(String v) {
            return new Op("delete " + v, List.of(v), "DELETE", P + "/volumes/" + v, null, 204, m -> {
                SortedMap<String, Vol> out = new TreeMap<>(m);
                out.remove(v);
                return out;
            });
        }
    }

    private static SortedMap<String, Vol> with(SortedMap<String, Vol> m, String name, Vol v) {
        SortedMap<String, Vol> out = new TreeMap<>(m);
        out.put(name, v);
        return out;
    }

    // ------------------------------------------------------------------ the pool kinds

    /** What the loop checks differently on each kind of pool. */
    private interface Medium {
        /** What a start did about the pool's medium: a line for the round, and whether it found a change to undo. */
        record Start(String summary, boolean repaired) {
        }

        /** The body of the POST that adds pool p. */
        String poolBody();

        /** The bytes the pool's medium holds now. */
        long allocated() throws Exception;

        /** What the start whose output is {@code log} did about the medium. */
        Start start(String log);

        /**
         * Checks the medium against listing {@code l} after a restart ({@code log}: the start's output,
         * {@code inFlight}: the objects of the calls in flight at the kill); returns the volumes and snapshots
         * ({@code volume@snapshot}) the document names that the medium lacks, each an object in flight.
         */
        Set<String> check(Listing l, String log, Set<String> inFlight, int round) throws Exception;

        /** Checks the pool after every volume was deleted ({@code emptyUsed}: its used bytes when it was new). */
        void checkEmpty(long emptyUsed) throws Exception;
    }

    /** The java engine's reflink-dir pool: files in a directory of an XFS made with reflink=1. */
    private final class ReflinkDir implements Medium {
        private final Path poolDir;

        ReflinkDir(Path poolDir) {
            this.poolDir = poolDir;
        }

        @Override
        public String poolBody() {
            return "{\"name\":\"p\",\"path\":\"" + poolDir + "\"}";
        }

        /** {@code du -s -B1} of the directory: every file's blocks, shared ones in each. */
        @Override
        public long allocated() throws IOException, InterruptedException {
            Process p = new ProcessBuilder("du", "-s", "-B1", poolDir.toString()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0).as("du: %s", out).isTrue();
            return Long.parseLong(out.trim().split("\\s+")[0]);
        }

        @Override
        public Start start(String log) {
            long removed = count(log, "the configuration does not name it");
            long restored = count(log, "its delete was never committed");
            long resized = count(log, "(a resize that did not complete)");
            return new Start("removed " + removed + " file(s), restored " + restored + ", set back " + resized,
                removed + restored + resized > 0);
        }

        /** The files are the listing's, of its sizes; du equals the listing's allocated bytes (block rounding). */
        @Override
        public Set<String> check(Listing l, String log, Set<String> inFlight, int round) throws Exception {
            TreeSet<String> expected = new TreeSet<>();
            for (var e : l.volumes.entrySet()) {
                expected.add(e.getKey() + ".vol");
                assertThat(Files.size(poolDir.resolve(e.getKey() + ".vol"))).as("size of volume %s", e.getKey())
                    .isEqualTo(e.getValue().size());
                for (var s : e.getValue().snapshots().entrySet()) {
                    String f = e.getKey() + "@" + s.getKey() + ".snap";
                    expected.add(f);
                    assertThat(Files.size(poolDir.resolve(f))).as("size of %s", f).isEqualTo(s.getValue());
                }
            }
            assertThat(files()).as("round %d: the pool's files are those of the listing", round)
                .containsExactlyElementsOf(expected);
            long du = allocated();
            assertThat(Math.abs(du - l.allocated)).as("round %d: du %d against the listing's %d allocated bytes, %d"
                + " file(s)", round, du, l.allocated, expected.size()).isLessThanOrEqualTo(4096L * (expected.size()
                + 1));
            return Set.of();
        }

        @Override
        public void checkEmpty(long emptyUsed) throws Exception {
            long after = usedWithin(emptyUsed + MIB);
            System.out.printf("pool used: %s empty, %s after the rounds and deleting every volume%n", mib(emptyUsed),
                mib(after));
            assertThat(after - emptyUsed).as("no space leaked over the kills").isLessThan(MIB);
            assertThat(files()).isEmpty();
        }

        private List<String> files() throws IOException {
            try (Stream<Path> s = Files.list(poolDir)) {
                return s.map(p -> p.getFileName().toString()).sorted().toList();
            }
        }
    }

    /**
     * The spdk engine's lvol pool on file bdev f0 (clusters of 1 MiB). The store's used clusters are what it holds; a
     * start reports the lvols it removed (an uncommitted create, snapshot or clone), those it kept, and how many the
     * store holds after that.
     */
    private final class Lvol implements Medium {
        private static final Pattern LACKS =
            Pattern.compile("bdev f0 lacks \\[([^\\]]*)\\] of the configuration");
        private static final Pattern REMOVED =
            Pattern.compile("pool p: removed lvol (\\S+) \\(");
        private static final Pattern KEPT =
            Pattern.compile("bdev f0 holds \\[([^\\]]*)\\], which the configuration does not name; kept");
        private static final Pattern IN_STORE =
            Pattern.compile("pool p: lvol store loaded on bdev f0, \\d+ volume\\(s\\), (\\d+) lvol\\(s\\) in the");
        private static final Pattern RESIZED =
            Pattern.compile("pool p: lvol (\\S+) holds");

        @Override
        public String poolBody() {
            return "{\"name\":\"p\",\"kind\":\"lvol\",\"baseBdev\":\"f0\",\"clusterSize\":" + MIB + "}";
        }

        /** The store's used clusters, in bytes. */
        @Override
        public long allocated() {
            return used();
        }

        @Override
        public Start start(String log) {
            List<String> lacks = found(LACKS, log);
            List<String> removed = found(REMOVED, log);
            List<String> resized = found(RESIZED, log);
            return new Start("found the store lacking " + lacks + ", removed " + removed + ", set to size " + resized,
                !lacks.isEmpty() || !removed.isEmpty() || !resized.isEmpty());
        }

        /**
         * What the store lacks, what the start removed from it and what it had of another size are objects of calls
         * in flight; the start kept nothing, and the store holds exactly the document's lvols (those it lacks aside),
         * whose used bytes are the listing's.
         */
        @Override
        public Set<String> check(Listing l, String log, Set<String> inFlight, int round) {
            Set<String> lacks = new TreeSet<>(found(LACKS, log));
            assertThat(inFlight).as("round %d: the lvols the store lacks", round).containsAll(lacks);
            assertThat(inFlight).as("round %d: the lvols the start removed", round).containsAll(found(REMOVED, log));
            assertThat(found(KEPT, log)).as("round %d: lvols the start kept that the document does not name", round)
                .isEmpty();
            for (String lvol : found(RESIZED, log)) {
                assertThat(inFlight.contains(lvol)).as("round %d: lvol %s of another size than the document's is of a"
                    + " call in flight; what the starts logged of it:%n%s", round, lvol, history(lvol)).isTrue();
            }
            int named = l.volumes.size() + l.volumes.values().stream().mapToInt(v -> v.snapshots().size()).sum();
            if (round > 0) { // round 0 follows the burst without a kill: no start since the pool was added
                assertThat(found(IN_STORE, log)).as("round %d: the store's lvols after the start: the document's %d,"
                    + " less the %d it lacks", round, named, lacks.size())
                    .containsExactly(Integer.toString(named - lacks.size()));
            }
            assertThat(used()).as("round %d: the store's used bytes are the listing's", round).isEqualTo(l.allocated);
            return lacks;
        }

        @Override
        public void checkEmpty(long emptyUsed) {
            long after = used();
            System.out.printf("store used: %s empty, %s after the rounds and deleting every volume%n", mib(emptyUsed),
                mib(after));
            assertThat(after).as("nothing left, nothing used").isEqualTo(emptyUsed);
        }

        /** What every start of the loop logged about {@code lvol}. */
        private String history(String lvol) {
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < starts; i++) {
                try {
                    for (String line : Files.readAllLines(dir.resolve("service-" + i + ".log"))) {
                        if (line.contains(lvol)) {
                            out.append(i).append(": ").append(line).append('\n');
                        }
                    }
                } catch (IOException e) {
                    out.append(i).append(": ").append(e).append('\n');
                }
            }
            return out.toString();
        }

        private static List<String> found(Pattern p, String log) {
            List<String> out = new ArrayList<>();
            Matcher m = p.matcher(log);
            while (m.find()) {
                for (String x : m.group(1).split(", ")) {
                    if (!x.isBlank()) {
                        out.add(x);
                    }
                }
            }
            return out;
        }
    }

    // ------------------------------------------------------------------ the service and the pool

    /** Starts the service from the document and waits for its API; fails with its output if it does not come up. */
    private void start() throws Exception {
        service = ServiceProcess.start(state, dir.resolve("service-" + starts++ + ".log"), "--state-dir",
            state.toString(), "--config", file.toString());
        String line = ServiceProcess.apiLine(apiPort, file);
        assertThat(service.awaitLine(l -> l.contains(line), START_TIMEOUT_MS))
            .as("start %d: the service came up; output:%n%s", starts, service.output()).isTrue();
    }

    private long used() {
        return expect(200, http.get(P)).json().get("used").asLong();
    }

    /**
     * The pool's used bytes once at most {@code bound} (XFS frees a removed file's blocks in the background), or as
     * they are after 30 s.
     */
    private long usedWithin(long bound) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long used = used();
        while (used >= bound && System.nanoTime() - deadline < 0) {
            Thread.sleep(20); // poll interval, bounded by the deadline
            used = used();
        }
        return used;
    }

    private static Http.Res expect(int status, Http.Res r) {
        assertThat(r.status()).as("%s", r).isEqualTo(status);
        return r;
    }

    private static long count(String log, String text) {
        return log.lines().filter(l -> l.contains(text)).count();
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    private static String mib(long bytes) {
        return String.format("%.2f MiB", bytes / (double) MIB);
    }
}
