package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.fuzz.Tries;
import io.nvmf4j.service.api.Http.Res;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;

import static io.nvmf4j.service.api.Http.enc;

/**
 * Fuzzes the request bodies of every mutating route of the REST API (issue 15) against a service in-process: a
 * valid body per route, mutated structurally (fields dropped, renamed, added, duplicated; values replaced by
 * wrong types, extremes, huge strings, deep nesting) and byte-wise (flips, cuts, garbage, invalid UTF-8), plus
 * bodies that are not objects at all, bodies nested 100 000 deep and bodies over the 1 MiB limit.
 *
 * <p>The property of each case: the answer is 2xx (the mutation happened to be valid) or 4xx with a JSON
 * {@code {"error": "..."}}, never 5xx and never no answer within {@link #ANSWER_SECONDS}; after a 4xx the live
 * configuration and the file are exactly what they were. An accepted change is undone by importing the
 * starting document (and clearing error injections), so every case starts from the same state. A case is
 * replayed from its seed alone ({@link #runCase(long)}).
 *
 * <pre>
 * ./dev.sh fuzz --rest [--cases N] [--seed S] [--replay SEED]
 * </pre>
 */
public final class RestBodyFuzz implements AutoCloseable {
    static final int ANSWER_SECONDS = 20;
    static final String NQN = TestService.NQN;
    static final String SUB = "/api/v1/subsystems/" + enc(NQN);
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000bb";

    /** A mutating route and a valid body for it. */
    record Route(String method, String path, String body) {
    }

    /** What a case gave: the route, the status (-1: no answer) and what broke (null: the property held). */
    public record Outcome(String route, int status, String problem) {
        boolean ok() {
            return problem == null;
        }
    }

    private final TestService t;
    private final Http http;
    private final List<Route> routes;
    private final String document;
    private final String live;
    private final String file;

    /** Starts the service on {@code dir} (one subsystem, a null and an error bdev, a free bdev for namespaces). */
    public RestBodyFuzz(Path dir) throws IOException {
        t = TestService.start(dir, c -> {
            c.api.requestsPerSecond = 1_000_000;
            c.api.requestBurst = 1_000_000;
            c.bdevs.add(new BdevConfig("n0", "null", 512, 4096));
            BdevConfig e = new BdevConfig();
            e.name = "e0";
            e.type = "error";
            e.base = "n0";
            c.bdevs.add(e);
            c.bdevs.add(new BdevConfig("n1", "null", 512, 4096));
            // namespace 1 masked to one host, so that adding another to it is a valid change
            c.subsystems.get(0).namespaces.get(0).hosts = new ArrayList<>(List.of(TestService.HOSTNQN));
        });
        http = t.http;
        Res doc = http.get("/api/v1/config");
        if (doc.status() != 200) {
            throw new IllegalStateException("GET /config: " + doc);
        }
        document = doc.body();
        live = t.liveJson();
        file = t.fileJson();
        int port = t.nvmePort;
        String listener = SUB + "/listeners/tcp/127.0.0.1/" + port;
        String tcp = http.get("/api/v1/transports").json().get("tcp").toString();
        String rdma = http.get("/api/v1/transports").json().get("rdma").toString();
        routes = List.of(
            new Route("POST", "/api/v1/bdevs", "{\"name\":\"fz1\",\"type\":\"null\",\"blockSize\":512,\"numBlocks\":64}"),
            new Route("POST", "/api/v1/bdevs", "{\"name\":\"fz2\",\"type\":\"malloc\",\"blockSize\":4096,"
                + "\"numBlocks\":16}"),
            new Route("PATCH", "/api/v1/bdevs/n1", "{\"numBlocks\":8192}"),
            new Route("POST", "/api/v1/bdevs/e0/errors", "{\"ioType\":\"read\",\"errorType\":\"eio\",\"count\":1}"),
            new Route("POST", "/api/v1/bdevs/e0/errors", "{\"ioType\":\"all\",\"errorType\":\"timeout\","
                + "\"count\":2,\"timeoutMs\":1000}"),
            new Route("POST", "/api/v1/subsystems", "{\"nqn\":\"nqn.2026-11.io.nvmf4j:fz\",\"allowAnyHost\":false,"
                + "\"hosts\":[\"" + HOST + "\"],\"namespaces\":[{\"nsid\":1,\"bdev\":\"n1\"}],"
                + "\"listeners\":[{\"transport\":\"tcp\",\"address\":\"127.0.0.1\",\"port\":" + port + "}]}"),
            new Route("PATCH", SUB, "{\"allowAnyHost\":false}"),
            new Route("POST", SUB + "/namespaces", "{\"nsid\":2,\"bdev\":\"n1\",\"anaGroup\":1}"),
            new Route("POST", SUB + "/namespaces/1/hosts", "{\"nqn\":\"" + HOST + "\"}"),
            new Route("POST", SUB + "/hosts", "{\"nqn\":\"" + HOST + "\"}"),
            new Route("POST", SUB + "/listeners", "{\"transport\":\"tcp\",\"address\":\"127.0.0.1\",\"port\":0}"),
            new Route("PUT", listener + "/ana/1", "{\"state\":\"inaccessible\"}"),
            new Route("POST", "/api/v1/discovery/referrals", "{\"transport\":\"tcp\",\"address\":\"10.0.0.1\","
                + "\"port\":4420}"),
            new Route("PUT", "/api/v1/transports/tcp", tcp),
            new Route("PUT", "/api/v1/transports/rdma", rdma),
            new Route("PUT", "/api/v1/config", document));
    }

    /** The routes and their valid bodies (for the test's check that each valid body is accepted). */
    List<Route> routes() {
        return routes;
    }

    TestService service() {
        return t;
    }

    /**
     * One case from {@code seed}: a route, its body mutated, the answer checked, the state compared or
     * restored.
     */
    public Outcome runCase(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        Route route = routes.get(rnd.nextInt(routes.size()));
        String body = mutate(route.body(), rnd);
        String contentType = rnd.nextInt(50) == 0 ? pick(rnd, "text/plain", "application/json; charset=utf-8",
            "application/jsonx", "", "application/json;;;") : "application/json";
        Res r;
        try {
            r = http.send(route.method(), route.path(), body, contentType.isEmpty() ? null : contentType);
        } catch (RuntimeException e) {
            return new Outcome(route.method() + " " + route.path(), -1, "no answer within " + ANSWER_SECONDS
                + " s: " + e);
        }
        String where = route.method() + " " + route.path();
        int s = r.status();
        if (s >= 200 && s < 300) {
            String undo = restore();
            return new Outcome(where, s, undo == null ? null : "accepted, then " + undo);
        }
        if (s < 400 || s >= 500) {
            return new Outcome(where, s, "status " + s + ": " + abbreviate(r.body()));
        }
        String problem = errorBodyProblem(r);
        if (problem != null) {
            return new Outcome(where, s, problem);
        }
        String nowLive = t.liveJson();
        if (!nowLive.equals(live)) {
            restore();
            return new Outcome(where, s, "refused, but the live configuration changed: "
                + firstDifference(live, nowLive));
        }
        String nowFile = t.fileJson();
        if (!nowFile.equals(file)) {
            restore();
            return new Outcome(where, s, "refused, but the saved configuration changed: "
                + firstDifference(file, nowFile));
        }
        return new Outcome(where, s, null);
    }

    /** Null when a 4xx answer is {"error": non-empty text, ...} with a JSON content type. */
    static String errorBodyProblem(Res r) {
        String type = r.header("Content-Type");
        if (type == null || !type.startsWith("application/json")) {
            return "4xx without a JSON content type (" + type + "): " + abbreviate(r.body());
        }
        JsonNode j;
        try {
            j = MAPPER.readTree(r.body());
        } catch (IOException e) {
            return "4xx body is not JSON: " + abbreviate(r.body());
        }
        if (j == null || !j.path("error").isTextual() || j.path("error").asText().isBlank()) {
            return "4xx body has no error message: " + abbreviate(r.body());
        }
        return null;
    }

    /** Puts the starting document back after an accepted case; null when both copies match it again. */
    String restore() {
        // the document first: an accepted document may have dropped e0, whose injected errors it does not hold
        Res imp = http.put("/api/v1/config", document);
        Res clear = http.delete("/api/v1/bdevs/e0/errors");
        if (imp.status() != 200 || clear.status() != 204) {
            return "restoring failed: " + imp + " / " + clear;
        }
        if (!t.liveJson().equals(live) || !t.fileJson().equals(file)) {
            return "restoring did not give the starting configuration back: live " + firstDifference(live,
                t.liveJson()) + ", saved " + firstDifference(file, t.fileJson());
        }
        return null;
    }

    /** The first line where two JSON texts differ, for a failure message ("same" when none). */
    static String firstDifference(String expected, String actual) {
        String[] a = expected.split("\n", -1);
        String[] b = actual.split("\n", -1);
        for (int i = 0; i < Math.max(a.length, b.length); i++) {
            String x = i < a.length ? a[i].strip() : "<end>";
            String y = i < b.length ? b[i].strip() : "<end>";
            if (!x.equals(y)) {
                return "line " + (i + 1) + " was '" + x + "', is '" + y + "'";
            }
        }
        return "same";
    }

    /** The service still answers: health, a read, and the document unchanged. */
    public String stillServes() {
        Res h = http.get("/api/v1/health/ready");
        if (h.status() != 200) {
            return "health: " + h;
        }
        Res subs = http.get("/api/v1/subsystems");
        if (subs.status() != 200 || !subs.body().contains(NQN)) {
            return "GET /subsystems: " + subs;
        }
        return t.liveJson().equals(live) && t.fileJson().equals(file) ? null : "configuration changed";
    }

    @Override
    public void close() {
        t.close();
    }

    // ------------------------------------------------------------------ mutation

    static String mutate(String valid, SplittableRandom rnd) {
        int kind = rnd.nextInt(100);
        if (kind < 4) {
            return special(rnd);
        }
        JsonNode tree;
        try {
            tree = MAPPER.readTree(valid);
        } catch (IOException e) {
            throw new IllegalStateException("template is not JSON: " + valid, e);
        }
        int rounds = 1 + rnd.nextInt(3);
        for (int i = 0; i < rounds; i++) {
            tree = mutateTree(tree, rnd);
        }
        String text;
        try {
            text = tree.toString();
        } catch (RuntimeException tooDeep) { // Jackson writes at most 1000 levels; send what was meant as text
            text = "[".repeat(1500) + "]".repeat(1500);
        }
        if (kind < 10) {
            text = duplicateKey(text, rnd);
        }
        if (kind >= 75) {
            text = mutateBytes(text, rnd);
        }
        return text;
    }

    /** Bodies that are not a mutated template: empty, scalars, arrays, too deep, too large. */
    private static String special(SplittableRandom rnd) {
        return switch (rnd.nextInt(9)) {
            case 0 -> "";
            case 1 -> pick(rnd, "null", "true", "0", "-1", "\"x\"", "[]", "{}", "1e999999", "[{}]", "  ");
            case 2 -> "[".repeat(100_000) + "]".repeat(100_000);
            case 3 -> "{\"a\":".repeat(50_000) + "1" + "}".repeat(50_000);
            case 4 -> "{\"name\":\"" + "x".repeat((int) ApiRoutes.BODY_LIMIT + 10) + "\"}";
            case 5 -> "{\"numBlocks\":" + "9".repeat(5000) + "}";
            case 6 -> "{\"name\":\"" + "\\u0000".repeat(1000) + "\"}";
            case 7 -> "{" + "\"k\":1,".repeat(20_000) + "\"k\":2}";
            default -> new String(randomBytes(rnd, 1 + rnd.nextInt(300)), StandardCharsets.ISO_8859_1);
        };
    }

    /** One structural change at a random node of the tree; returns the (possibly new) root. */
    static JsonNode mutateTree(JsonNode root, SplittableRandom rnd) {
        List<JsonNode> containers = new ArrayList<>();
        collect(root, containers);
        if (containers.isEmpty() || rnd.nextInt(30) == 0) {
            return randomValue(rnd, 0);
        }
        JsonNode c = containers.get(rnd.nextInt(containers.size()));
        if (c instanceof ObjectNode o) {
            List<String> names = new ArrayList<>();
            o.fieldNames().forEachRemaining(names::add);
            int op = rnd.nextInt(names.isEmpty() ? 1 : 6);
            if (op == 0) {
                o.set(pick(rnd, "nqn", "name", "port", "nsid", "bdev", "x", "", "numBlocks", "type", "hosts",
                    "listeners", "namespaces", "state", "\u0000", "__proto__"), randomValue(rnd, 0));
            } else {
                String name = names.get(rnd.nextInt(names.size()));
                switch (op) {
                    case 1, 2 -> o.set(name, randomValue(rnd, 0));
                    case 3 -> o.remove(name);
                    case 4 -> o.set(name + pick(rnd, "x", "s", "_", " "), o.remove(name));
                    default -> o.set(name, F.arrayNode().add(o.get(name)));
                }
            }
        } else if (c instanceof ArrayNode a) {
            int op = rnd.nextInt(a.isEmpty() ? 2 : 4);
            switch (op) {
                case 0 -> a.add(randomValue(rnd, 0));
                case 1 -> {
                    int n = 1 + rnd.nextInt(200);
                    JsonNode copy = a.isEmpty() ? randomValue(rnd, 0) : a.get(0);
                    for (int i = 0; i < n; i++) {
                        a.add(copy.deepCopy());
                    }
                }
                case 2 -> a.remove(rnd.nextInt(a.size()));
                default -> a.set(rnd.nextInt(a.size()), randomValue(rnd, 0));
            }
        }
        return root;
    }

    private static void collect(JsonNode n, List<JsonNode> out) {
        if (n.isContainerNode()) {
            out.add(n);
            for (Iterator<JsonNode> it = n.elements(); it.hasNext(); ) {
                collect(it.next(), out);
            }
        }
    }

    static JsonNode randomValue(SplittableRandom rnd, int depth) {
        switch (rnd.nextInt(depth > 3 ? 7 : 10)) {
            case 0:
                return F.nullNode();
            case 1:
                return F.booleanNode(rnd.nextBoolean());
            case 2:
                return F.numberNode(pick(rnd, 0L, -1L, 1L, 2L, 255L, 256L, 65535L, 65536L, 70000L,
                    (long) Integer.MAX_VALUE, (long) Integer.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE,
                    4294967296L, rnd.nextLong()));
            case 3:
                return F.numberNode(pick(rnd, 0.5, -0.0, 1e308, Double.MIN_VALUE, 4420.0, -1e-300));
            case 4:
                return F.numberNode(new java.math.BigInteger("1" + "0".repeat(1 + rnd.nextInt(400))));
            case 5:
                return F.textNode(pick(rnd, "", " ", "null", "nqn.2014-08.org.nvmexpress.discovery", "tcp", "rdma",
                    "127.0.0.1", "::1", "..", "../../etc/passwd", "/dev/null", "\u0000", "\uD800", "\u202E",
                    "DHHC-1:00:AAAA:", "nqn.2026-11.io.nvmf4j:rest-test", "n1", "e0", "m0", "eio", "timeout",
                    "optimized", "change", "%s%n", "${jndi:x}", "1e3", "0x10", "true"));
            case 6:
                return F.textNode(randomString(rnd, 1 + rnd.nextInt(rnd.nextInt(10) == 0 ? 100_000 : 300)));
            case 7: {
                ArrayNode a = F.arrayNode();
                int n = rnd.nextInt(4);
                for (int i = 0; i < n; i++) {
                    a.add(randomValue(rnd, depth + 1));
                }
                return a;
            }
            case 8: {
                ObjectNode o = F.objectNode();
                int n = rnd.nextInt(4);
                for (int i = 0; i < n; i++) {
                    o.set(randomString(rnd, 1 + rnd.nextInt(8)), randomValue(rnd, depth + 1));
                }
                return o;
            }
            default: {
                JsonNode v = F.numberNode(1);
                int levels = 1 + rnd.nextInt(rnd.nextInt(5) == 0 ? 900 : 30); // deeper: special(); the tree writer stops at 1000
                for (int i = 0; i < levels; i++) {
                    v = rnd.nextBoolean() ? F.arrayNode().add(v) : F.objectNode().set("a", v);
                }
                return v;
            }
        }
    }

    /** Repeats one "key": of the text right after itself with another value. */
    private static String duplicateKey(String text, SplittableRandom rnd) {
        int at = text.indexOf("\":");
        if (at < 0) {
            return text;
        }
        int start = text.lastIndexOf('"', at - 1);
        if (start < 0) {
            return text;
        }
        String key = text.substring(start, at + 2);
        return text.substring(0, start) + key + pick(rnd, "1", "null", "\"x\"", "[]") + "," + text.substring(start);
    }

    static String mutateBytes(String text, SplittableRandom rnd) {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        if (b.length == 0) {
            return text;
        }
        switch (rnd.nextInt(6)) {
            case 0 -> b = java.util.Arrays.copyOf(b, rnd.nextInt(b.length));
            case 1 -> {
                int n = 1 + rnd.nextInt(8);
                for (int i = 0; i < n; i++) {
                    b[rnd.nextInt(b.length)] ^= (byte) (1 << rnd.nextInt(8));
                }
            }
            case 2 -> {
                int at = rnd.nextInt(b.length + 1);
                byte[] junk = randomBytes(rnd, 1 + rnd.nextInt(16));
                byte[] out = new byte[b.length + junk.length];
                System.arraycopy(b, 0, out, 0, at);
                System.arraycopy(junk, 0, out, at, junk.length);
                System.arraycopy(b, at, out, at + junk.length, b.length - at);
                b = out;
            }
            case 3 -> b[rnd.nextInt(b.length)] = (byte) pickInt(rnd, '{', '}', '[', ']', '"', ',', ':', '\\', 0, 0xff,
                0xc3, 0xed);
            case 4 -> {
                int from = rnd.nextInt(b.length);
                int to = from + rnd.nextInt(b.length - from);
                byte[] out = new byte[b.length - (to - from)];
                System.arraycopy(b, 0, out, 0, from);
                System.arraycopy(b, to, out, from, b.length - to);
                b = out;
            }
            default -> {
                int from = rnd.nextInt(b.length);
                byte[] out = java.util.Arrays.copyOf(b, b.length + (b.length - from));
                System.arraycopy(b, from, out, b.length, b.length - from);
                b = out;
            }
        }
        // ISO-8859-1 keeps each byte as one char; Http sends the String as UTF-8, so invalid UTF-8 comes out as
        // the two-byte encoding of those chars, and case 3's 0xc3/0xed as lone lead bytes when followed by ASCII
        return new String(b, StandardCharsets.ISO_8859_1);
    }

    private static byte[] randomBytes(SplittableRandom rnd, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) rnd.nextInt(256);
        }
        return b;
    }

    private static String randomString(SplittableRandom rnd, int n) {
        StringBuilder sb = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            int k = rnd.nextInt(10);
            sb.append(k < 7 ? (char) (0x20 + rnd.nextInt(0x5f)) : k < 9 ? (char) rnd.nextInt(0x20)
                : (char) rnd.nextInt(0xffff));
        }
        return sb.toString();
    }

    @SafeVarargs
    private static <T> T pick(SplittableRandom rnd, T... values) {
        return values[rnd.nextInt(values.length)];
    }

    private static int pickInt(SplittableRandom rnd, int... values) {
        return values[rnd.nextInt(values.length)];
    }

    static String abbreviate(String s) {
        return s == null || s.length() <= 300 ? s : s.substring(0, 300) + "...(" + s.length() + " chars)";
    }

    // ------------------------------------------------------------------ the long run

    /** Result of a run. */
    public record Result(long cases, long accepted, long refused, List<String> failures, long millis,
                         java.util.SortedMap<Integer, Long> statuses) {
    }

    /** Runs {@code cases} cases from {@code seed} (case i's seed derived from both), then checks the service. */
    public Result run(long cases, long seed, PrintStream out) {
        long start = System.nanoTime();
        long accepted = 0;
        List<String> failures = new ArrayList<>();
        java.util.SortedMap<Integer, Long> statuses = new java.util.TreeMap<>();
        long lastPrint = start;
        for (long i = 0; i < cases; i++) {
            long caseSeed = Tries.seed(seed, i);
            Outcome o = runCase(caseSeed);
            statuses.merge(o.status(), 1L, Long::sum);
            if (!o.ok()) {
                failures.add("seed " + caseSeed + ": " + o.route() + " -> " + o.status() + " " + o.problem());
                out.println("RestBodyFuzz: FAIL " + failures.get(failures.size() - 1));
            } else if (o.status() < 300) {
                accepted++;
            }
            long now = System.nanoTime();
            if (now - lastPrint > 10_000_000_000L) {
                out.printf("RestBodyFuzz: %d cases, %d failures, %d s%n", i + 1, failures.size(),
                    (now - start) / 1_000_000_000L);
                lastPrint = now;
            }
        }
        String still = stillServes();
        if (still != null) {
            failures.add("after the run: " + still);
        }
        return new Result(cases, accepted, cases - accepted - failures.size(), failures,
            (System.nanoTime() - start) / 1_000_000, statuses);
    }

    /** {@code [--cases N] [--seed S] [--replay SEED]}; exit 1 on any failure. */
    public static void main(String[] args) throws Exception {
        long cases = 100_000;
        long seed = System.nanoTime();
        Long replay = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--cases" -> cases = Long.parseLong(args[++i]);
                case "--seed" -> seed = Long.parseLong(args[++i]);
                case "--replay" -> replay = Long.parseLong(args[++i]);
                case "--check-templates" -> replay = Long.MIN_VALUE;
                default -> {
                    System.err.println("usage: RestBodyFuzz [--cases N] [--seed S] [--replay SEED]");
                    System.exit(2);
                }
            }
        }
        org.slf4j.Logger root = org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        if (root instanceof ch.qos.logback.classic.Logger l) { // the audit log's line per request would drown the run
            l.setLevel(ch.qos.logback.classic.Level.ERROR);
        }
        Path dir = Files.createTempDirectory("nvmf4j-restfuzz");
        int rc;
        try (RestBodyFuzz f = new RestBodyFuzz(dir)) {
            if (replay != null && replay == Long.MIN_VALUE) {
                rc = 0;
                for (Route r : f.routes()) {
                    Res res = f.http.send(r.method(), r.path(), r.body(), "application/json");
                    System.out.println(r.method() + " " + r.path() + " -> " + res.status() + " " + abbreviate(res.body())
                        + " / undo: " + f.restore());
                }
            } else if (replay != null) {
                Outcome o = f.runCase(replay);
                System.out.println("RestBodyFuzz: replay " + replay + ": " + o);
                rc = o.ok() ? 0 : 1;
            } else {
                System.out.println("RestBodyFuzz: " + cases + " cases from seed " + seed);
                Result r = f.run(cases, seed, System.out);
                System.out.printf("RestBodyFuzz: %d cases (%d accepted and undone, %d refused with a 4xx), "
                    + "%d failures, %.1f s; answers by status: %s%n", r.cases(), r.accepted(), r.refused(),
                    r.failures().size(), r.millis() / 1000.0, r.statuses());
                rc = r.failures().isEmpty() ? 0 : 1;
            }
        } finally {
            deleteTree(dir);
        }
        System.exit(rc);
    }

    private static void deleteTree(Path dir) throws IOException {
        try (var s = Files.walk(dir)) {
            for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

}
