package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static io.nvmf4j.service.api.Http.enc;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * QoS through REST on the java engine, with a host over TCP on loopback: each refusal names its field and changes
 * nothing; limits per namespace, per host (on a subsystem) and per group hold I/O back (it waits, it is not failed)
 * while an unlimited neighbour is not; limits change and go while I/O runs; a queue that closes with I/O held back
 * completes it as aborted. That a limit holds its rate is measured by the benchmark kit (fio-jobs qos), not here.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class QosApiTest {
    private static final String OTHER_HOST = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000bb";
    @TempDir
    static Path dir;
    private static TestService t;
    private static String ns;
    private static String sub;

    @BeforeAll
    static void start() throws Exception {
        t = TestService.start(dir.resolve("state"), c -> {
            c.bdevs.add(new BdevConfig("m1", "malloc", 512, 2048));
            c.subsystems.get(0).namespaces.add(new NamespaceConfig(2, "m1"));
        });
        sub = "/api/v1/subsystems/" + enc(TestService.NQN);
        ns = sub + "/namespaces";
    }

    @AfterAll
    static void stop() {
        if (t != null) {
            t.close();
        }
    }

    @AfterEach
    void clear() {
        ObjectNode doc = (ObjectNode) t.http.get("/api/v1/config").json();
        doc.remove("qosGroups");
        ((ObjectNode) doc.get("subsystems").get(0)).remove("qos");
        doc.get("subsystems").get(0).get("namespaces").forEach(n -> ((ObjectNode) n).remove("qos"));
        assertThat(t.http.put("/api/v1/config", doc.toString()).status()).isEqualTo(200);
    }

    private static Namespace live(int nsid) {
        return ((JavaEngine) t.service.target().engine()).target().subsystem(TestService.NQN).namespace(nsid);
    }

    private static NvmeController connect(String hostnqn) throws Exception {
        return NvmeController.open("127.0.0.1", t.nvmePort, TestService.NQN, hostnqn, 10_000, 1,
            TcpHostOptions.DEFAULT);
    }

    /** Asserts a 400 that names {@code field}; its message. */
    private static String refusal(Http.Res r, String field) {
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        assertThat(r.field()).as("%s", r).isEqualTo(field);
        return r.error();
    }

    @Test
    void badLimitsAndGroupsAreRefusedNamingTheFieldAndChangeNothing() {
        String before = t.fileJson();
        assertThat(refusal(t.http.put(ns + "/1/qos", "{\"iops\": -1}"), "iops"))
            .isEqualTo("iops: must be 0..9223372036854775807 (0: unlimited), got -1");
        assertThat(refusal(t.http.put(ns + "/1/qos", "{\"iops\": 9223372036854775808}"), "iops"))
            .isEqualTo("iops: number out of range");
        assertThat(refusal(t.http.put(ns + "/1/qos", "{\"rwMBps\": 99999999999999999999999}"), "rwMBps"))
            .isEqualTo("rwMBps: number out of range");
        assertThat(refusal(t.http.put(ns + "/1/qos", "{\"readMBps\": 8796093022208}"), "readMBps"))
            .isEqualTo("readMBps: must be 0..8796093022207 (MB of 2^20 bytes; 0: unlimited), got 8796093022208");
        refusal(t.http.put(ns + "/1/qos", "{\"writeMBps\": \"fast\"}"), "writeMBps");
        refusal(t.http.put(ns + "/1/qos", "{\"burst\": 5}"), "burst");
        refusal(t.http.put(ns + "/1/qos/hosts/" + enc(OTHER_HOST), "{\"iops\": -5}"), "iops");
        assertThat(refusal(t.http.put(ns + "/1/qos/hosts/not-an-nqn", "{\"iops\": 5}"), "hostnqn"))
            .startsWith("hostnqn: ");
        refusal(t.http.put(sub + "/qos/hosts/" + enc(OTHER_HOST), "{\"writeMBps\": -1}"), "writeMBps");
        assertThat(t.http.put(ns + "/9/qos", "{\"iops\": 5}").status()).as("unknown namespace").isEqualTo(404);
        assertThat(t.http.put("/api/v1/subsystems/" + enc("nqn.2026-11.io.nvmf4j:none") + "/qos/hosts/"
            + enc(OTHER_HOST), "{\"iops\": 5}").status()).isEqualTo(404);

        String groups = "/api/v1/qos-groups";
        String g = groups + "/tenant";
        assertThat(refusal(t.http.post(groups, group("tenant", "{\"nqn\":\"" + TestService.NQN + "\",\"nsid\":7}",
            100)), "namespaces[0]")).isEqualTo("namespaces[0]: no namespace 7 in subsystem " + TestService.NQN);
        assertThat(refusal(t.http.post(groups, group("tenant", member(1) + "," + member(2) + "," + member(1), 100)),
            "namespaces[2]")).isEqualTo("namespaces[2]: namespace 1 of " + TestService.NQN
            + " is named twice in group tenant");
        refusal(t.http.post(groups, group("tenant", member(1), -3)), "limits.iops");
        assertThat(refusal(t.http.post(groups, group("-bad", member(1), 5)), "name")).startsWith("name:");
        assertThat(t.http.put(g, group("tenant", member(1), 100)).status()).as("no such group").isEqualTo(404);
        assertThat(t.http.post(groups, group("tenant", member(1), 100)).status()).isEqualTo(201);
        assertThat(t.http.post(groups, group("tenant", member(2), 100)).status()).isEqualTo(409);
        refusal(t.http.put(g, group("other", member(1), 100)), "name");
        refusal(t.http.put(g, group("tenant", member(1) + "," + member(1), 100)), "namespaces[1]");
        String withGroup = t.fileJson();
        assertThat(refusal(t.http.post(groups, group("second", member(2) + "," + member(1), 100)),
            "namespaces[1]")).isEqualTo("namespaces[1]: namespace 1 of " + TestService.NQN
            + " is in group tenant already (a namespace is in one group at most)");
        assertThat(t.fileJson()).as("unchanged by the refusals").isEqualTo(withGroup);
        assertThat(t.http.delete(g).status()).isEqualTo(204);
        assertThat(t.http.delete(g).status()).isEqualTo(404);
        assertThat(t.http.delete(ns + "/1/qos").status()).as("no limits to remove").isEqualTo(404);
        assertThat(t.fileJson()).as("unchanged").isEqualTo(before);
    }

    private static String member(int nsid) {
        return "{\"nqn\":\"" + TestService.NQN + "\",\"nsid\":" + nsid + "}";
    }

    private static String group(String name, String members, long iops) {
        return "{\"name\": \"" + name + "\", \"namespaces\": [" + members + "], \"limits\": {\"iops\": " + iops
            + "}}";
    }

    @Test
    void limitsAreKeptInTheDocumentAndShown() {
        Http.Res r = t.http.put(ns + "/1/qos", "{\"iops\": 5000, \"readMBps\": 100}");
        assertThat(r.status()).as("%s", r).isEqualTo(200);
        assertThat(r.json()).isEqualTo(Http.parse("{\"iops\": 5000, \"readMBps\": 100}"));
        assertThat(t.http.put(ns + "/1/qos/hosts/" + enc(OTHER_HOST), "{\"writeMBps\": 7}").status()).isEqualTo(200);
        assertThat(t.http.put(sub + "/qos/hosts/" + enc(OTHER_HOST), "{\"iops\": 9}").status()).isEqualTo(200);
        assertThat(t.http.post("/api/v1/qos-groups", group("tenant", member(2), 300)).status()).isEqualTo(201);
        JsonNode saved = Http.parse(t.fileJson());
        assertThat(saved.get("subsystems").get(0).get("namespaces").get(0).get("qos")).isEqualTo(Http.parse(
            "{\"iops\":5000,\"readMBps\":100,\"hosts\":[{\"hostNqn\":\"" + OTHER_HOST + "\",\"limits\":"
                + "{\"writeMBps\":7}}]}"));
        assertThat(saved.get("subsystems").get(0).get("qos")).isEqualTo(Http.parse(
            "{\"hosts\":[{\"hostNqn\":\"" + OTHER_HOST + "\",\"limits\":{\"iops\":9}}]}"));
        assertThat(saved.get("qosGroups")).isEqualTo(Http.parse("[{\"name\":\"tenant\",\"namespaces\":["
            + member(2) + "],\"limits\":{\"iops\":300}}]"));
        assertThat(t.http.get(ns + "/1/qos").json()).isEqualTo(saved.get("subsystems").get(0).get("namespaces")
            .get(0).get("qos"));
        assertThat(t.http.get("/api/v1/qos-groups").json()).isEqualTo(saved.get("qosGroups"));

        assertThat(t.http.delete(ns + "/1/qos").status()).isEqualTo(204);
        assertThat(t.http.get(ns + "/1/qos").json()).as("its host's limits stay").isEqualTo(Http.parse(
            "{\"hosts\":[{\"hostNqn\":\"" + OTHER_HOST + "\",\"limits\":{\"writeMBps\":7}}]}"));
        assertThat(t.http.delete(ns + "/1/qos/hosts/" + enc(OTHER_HOST)).status()).isEqualTo(204);
        assertThat(t.http.delete(sub + "/qos/hosts/" + enc(OTHER_HOST)).status()).isEqualTo(204);
        assertThat(t.http.delete(sub + "/qos/hosts/" + enc(OTHER_HOST)).status()).isEqualTo(404);
        assertThat(t.http.delete(ns + "/2").status()).as("a removed namespace leaves its group").isEqualTo(204);
        assertThat(t.http.get("/api/v1/qos-groups/tenant").json().get("namespaces")).isEmpty();
        assertThat(t.http.post(ns, "{\"nsid\": 2, \"bdev\": \"m1\"}").status()).isEqualTo(201);
        saved = Http.parse(t.fileJson());
        assertThat(saved.get("subsystems").get(0).has("qos")).isFalse();
        assertThat(saved.get("subsystems").get(0).get("namespaces").get(0).has("qos")).isFalse();
    }

    /**
     * A limit set while a host reads holds its I/O back (each read beyond the first waits for its budget), is
     * raised and removed while the reads go on, and every read succeeds; a neighbour namespace without limits on the
     * same poll group is not held back. The limits that hold reads back are 1 IOPS: a read gets past one only when
     * the host sends it a whole second after the read before it, which no stall of a loaded machine's test thread
     * between two sends comes near.
     */
    @Test
    void aLimitChangedAndRemovedWhileIoRunsHoldsIoBackAndFailsNone() throws Exception {
        try (NvmeController c = connect(TestService.HOSTNQN)) {
            assertThat(t.http.put(ns + "/1/qos", "{\"iops\": 1}").status()).isEqualTo(200);
            long delayed = live(1).qosDelayed.sum();
            List<CompletableFuture<Completion>> reads = reads(c, 1, 16);
            await(() -> live(1).qosDelayed.sum() - delayed >= 15, "15 of 16 reads held back at 1 IOPS");
            long neighbour = live(2).qosDelayed.sum();
            for (CompletableFuture<Completion> r : reads(c, 2, 16)) {
                assertThat(r.get(10, TimeUnit.SECONDS).ok()).isTrue();
            }
            assertThat(live(2).qosDelayed.sum()).as("the unlimited neighbour waits for nothing").isEqualTo(neighbour);
            assertThat(t.http.put(ns + "/1/qos", "{\"iops\": 1000000}").status()).as("raised while held")
                .isEqualTo(200);
            reads.addAll(reads(c, 1, 16));
            assertThat(t.http.delete(ns + "/1/qos").status()).as("removed while reads run").isEqualTo(204);
            reads.addAll(reads(c, 1, 16));
            for (CompletableFuture<Completion> r : reads) {
                assertThat(r.get(10, TimeUnit.SECONDS).ok()).as("waited, not failed").isTrue();
            }
            assertThat(live(1).qosWaiting.sum()).isZero();
            assertThat(live(1).qos()).as("no limit left").isNull();
        }
    }

    /** A host's limit on the subsystem holds that host's I/O to every namespace; another host's goes on. */
    @Test
    void aHostLimitOnTheSubsystemHoldsThatHostOnly() throws Exception {
        assertThat(t.http.put(sub + "/qos/hosts/" + enc(TestService.HOSTNQN), "{\"iops\": 1}").status())
            .isEqualTo(200);
        try (NvmeController limited = connect(TestService.HOSTNQN); NvmeController other = connect(OTHER_HOST)) {
            long before = live(1).qosDelayed.sum() + live(2).qosDelayed.sum();
            for (CompletableFuture<Completion> r : reads(other, 1, 16)) {
                assertThat(r.get(10, TimeUnit.SECONDS).ok()).isTrue();
            }
            assertThat(live(1).qosDelayed.sum() + live(2).qosDelayed.sum()).as("another host").isEqualTo(before);
            List<CompletableFuture<Completion>> reads = reads(limited, 1, 8);
            reads.addAll(reads(limited, 2, 8));
            await(() -> live(1).qosDelayed.sum() + live(2).qosDelayed.sum() - before >= 15,
                "15 of the limited host's 16 reads over both namespaces held back");
            assertThat(t.http.delete(sub + "/qos/hosts/" + enc(TestService.HOSTNQN)).status()).isEqualTo(204);
            for (CompletableFuture<Completion> r : reads) {
                assertThat(r.get(10, TimeUnit.SECONDS).ok()).isTrue();
            }
        }
    }

    /** A group's limit is one budget for its namespaces together. */
    @Test
    void aGroupLimitIsSharedByItsNamespaces() throws Exception {
        assertThat(t.http.post("/api/v1/qos-groups", group("tenant", member(1) + "," + member(2), 1)).status())
            .isEqualTo(201);
        assertThat(live(1).qos()).isNotNull();
        try (NvmeController c = connect(TestService.HOSTNQN)) {
            long before = live(1).qosDelayed.sum() + live(2).qosDelayed.sum();
            List<CompletableFuture<Completion>> reads = reads(c, 1, 8);
            reads.addAll(reads(c, 2, 8));
            await(() -> live(1).qosDelayed.sum() + live(2).qosDelayed.sum() - before >= 15,
                "15 of 16 reads over the group's two namespaces held back");
            assertThat(t.http.delete("/api/v1/qos-groups/tenant").status()).isEqualTo(204);
            for (CompletableFuture<Completion> r : reads) {
                assertThat(r.get(10, TimeUnit.SECONDS).ok()).isTrue();
            }
        }
    }

    /**
     * Writes held back when their connection goes complete as aborted on the target: none waits any more, none
     * holds the namespace (it is removed at once) and their buffers go back (the leak detector runs paranoid). Of
     * the 20 writes at 1 IOPS one goes each second: nine or more still wait for 10 s, however late this thread
     * looks.
     */
    @Test
    void writesHeldBackWhenTheConnectionCloses() throws Exception {
        assertThat(t.http.put(ns + "/2/qos", "{\"iops\": 1}").status()).isEqualTo(200);
        NvmeController c = connect(TestService.HOSTNQN);
        try {
            for (int i = 0; i < 20; i++) {
                c.io(0).writeAsync(2, i, new byte[4096]);
            }
            await(() -> live(2).qosWaiting.sum() >= 9, "9 writes waiting");
        } finally {
            c.io(0).queue().abort();
            c.admin().queue().abort();
        }
        Namespace n = live(2);
        await(() -> n.qosWaiting.sum() == 0, "the held writes completed when their queue closed");
        assertThat(n.inFlight()).isZero();
        assertThat(t.http.delete(ns + "/2").status()).isEqualTo(204);
        assertThat(t.http.post(ns, "{\"nsid\": 2, \"bdev\": \"m1\"}").status()).isEqualTo(201);
    }

    /**
     * Reads held back on a namespace that is removed end at once as Invalid Namespace, not when their budget would
     * have come (at 1 IOPS, seconds later). Of the 20 reads one goes each second, so nine or more still wait when
     * the removal comes within 10 s, and those would take 8 s more by their budget.
     */
    @Test
    void readsHeldBackOnARemovedNamespaceEndAtOnce() throws Exception {
        assertThat(t.http.put(ns + "/2/qos", "{\"iops\": 1}").status()).isEqualTo(200);
        try (NvmeController c = connect(TestService.HOSTNQN)) {
            List<CompletableFuture<Completion>> reads = reads(c, 2, 20);
            await(() -> live(2).qosWaiting.sum() >= 9, "9 reads waiting");
            assertThat(t.http.delete(ns + "/2").status()).isEqualTo(204);
            CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).get(5, TimeUnit.SECONDS);
            int invalid = 0;
            for (CompletableFuture<Completion> r : reads) {
                Completion done = r.get();
                invalid += done.sct() == 0 && done.sc() == 0x0B ? 1 : 0;
            }
            assertThat(invalid).as("Invalid Namespace").isGreaterThanOrEqualTo(9);
        } finally {
            assertThat(t.http.post(ns, "{\"nsid\": 2, \"bdev\": \"m1\"}").status()).isEqualTo(201);
        }
    }

    /** A whole document with other limits changes them live; the namespace stays (no changed-namespace). */
    @Test
    void aWholeDocumentChangesLimitsInPlace() {
        Namespace before = live(1);
        ObjectNode doc = (ObjectNode) t.http.get("/api/v1/config").json();
        ((ObjectNode) doc.get("subsystems").get(0).get("namespaces").get(0)).putObject("qos").put("iops", 777);
        doc.putArray("qosGroups").addObject().put("name", "g").putObject("limits").put("rwMBps", 5);
        ((ObjectNode) doc.get("qosGroups").get(0)).putArray("namespaces").add(Http.parse(member(2)));
        Http.Res r = t.http.put("/api/v1/config", doc.toString());
        assertThat(r.status()).as("%s", r).isEqualTo(200);
        assertThat(live(1)).as("the same live namespace").isSameAs(before);
        assertThat(live(1).qos()).isNotNull();
        assertThat(live(2).qos()).isNotNull();
        assertThat(t.http.get(ns + "/1/qos").json().get("iops").asLong()).isEqualTo(777);
    }

    private static List<CompletableFuture<Completion>> reads(NvmeController c, int nsid, int n) {
        List<CompletableFuture<Completion>> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(c.io(0).readAsync(nsid, i, 1));
        }
        return out;
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - end).as("waiting for: %s", what).isNegative();
            Thread.sleep(5);
        }
    }
}
