package io.nvmf4j.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.it.TestTarget;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The config document's strict parse and validation ({@link ConfigStore#parse} then
 * {@link ConfigValidator#validate}) under fuzz. A case starts from a full document (bdevs of every type,
 * two subsystems, listeners, a referral) and either mutates its bytes or its JSON tree (a value replaced by
 * null, a wrong type, an extreme number, a long or odd string; a field removed or added; a node copied
 * elsewhere). Property: the outcome is a valid document or a {@link ConfigException} whose every problem is
 * a non-empty message; no other exception.
 */
public final class ConfigFuzz implements FuzzTarget {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private final ObjectMapper mapper = new ObjectMapper();
    private final JsonNode base;
    private final byte[] baseBytes;
    /** Accepted and refused documents, for the summary. */
    private long accepted;
    private long refused;

    public ConfigFuzz() {
        TargetConfig c = TestTarget.config(4420);
        BdevConfig file = new BdevConfig("f0", "file", 4096, 1024);
        file.path = "/var/lib/nvmf4j/f0.img";
        file.ioWorkers = 4;
        c.bdevs.add(file);
        c.bdevs.add(new BdevConfig("n0", "null", 512, 2048));
        ReferralConfig ref = new ReferralConfig();
        ref.transport = "tcp";
        ref.address = "192.0.2.1";
        ref.port = 4420;
        c.referrals.add(ref);
        String json = ConfigStore.toJson(c);
        baseBytes = json.getBytes(StandardCharsets.UTF_8);
        try {
            base = mapper.readTree(json);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String name() {
        return "config";
    }

    @Override
    public void run(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        String doc;
        if (r.nextInt(4) == 0) {
            doc = new String(Mutator.mutate(baseBytes, r, baseBytes.length + 512), StandardCharsets.UTF_8);
        } else {
            JsonNode tree = base.deepCopy();
            int edits = 1 + r.nextInt(4);
            for (int i = 0; i < edits; i++) {
                mutateTree(tree, r);
            }
            doc = tree.toString();
        }
        try {
            TargetConfig c = ConfigStore.parse(doc);
            ConfigValidator.validate(c);
            accepted++;
        } catch (ConfigException e) {
            if (e.problems().isEmpty() || e.problems().stream().anyMatch(p -> p == null || p.isBlank())) {
                throw new Escape("refused without a message: " + e.problems());
            }
            refused++;
        } catch (RuntimeException e) {
            throw new Escape("config document made " + e + " escape: " + abbreviate(doc), e);
        }
    }

    private static String abbreviate(String doc) {
        return doc.length() > 2000 ? doc.substring(0, 2000) + "..." : doc;
    }

    /** Picks a random container node and edits one of its members. */
    private void mutateTree(JsonNode root, SplittableRandom r) {
        List<JsonNode> containers = new ArrayList<>();
        collect(root, containers);
        JsonNode c = containers.get(r.nextInt(containers.size()));
        if (c instanceof ObjectNode o) {
            List<String> names = new ArrayList<>();
            o.fieldNames().forEachRemaining(names::add);
            int op = r.nextInt(8);
            if (names.isEmpty() || op == 0) {
                o.set(r.nextBoolean() ? "unknownField" : "name", value(r, root));
            } else if (op == 1) {
                o.remove(names.get(r.nextInt(names.size())));
            } else {
                o.set(names.get(r.nextInt(names.size())), value(r, root));
            }
        } else if (c instanceof ArrayNode a) {
            int op = r.nextInt(4);
            if (a.isEmpty() || op == 0) {
                a.add(value(r, root));
            } else if (op == 1) {
                a.remove(r.nextInt(a.size()));
            } else if (op == 2) {
                a.add(a.get(r.nextInt(a.size())).deepCopy()); // a duplicate: names, nsids, listeners
            } else {
                a.set(r.nextInt(a.size()), value(r, root));
            }
        }
    }

    private static void collect(JsonNode n, List<JsonNode> out) {
        if (n.isContainerNode()) {
            out.add(n);
            for (Iterator<JsonNode> it = n.elements(); it.hasNext(); ) {
                collect(it.next(), out);
            }
        }
    }

    private static JsonNode value(SplittableRandom r, JsonNode root) {
        return switch (r.nextInt(16)) {
            case 0 -> F.nullNode();
            case 1 -> F.numberNode(-1);
            case 2 -> F.numberNode(0);
            case 3 -> F.numberNode(Long.MAX_VALUE);
            case 4 -> F.numberNode(Integer.MIN_VALUE);
            case 5 -> F.numberNode(1L << 40);
            case 6 -> F.numberNode(1.5e300);
            case 7 -> F.textNode("");
            case 8 -> F.textNode("x".repeat(1 + r.nextInt(400)));
            case 9 -> F.textNode(new String[] {"../..", "nqn.2014-08.org.nvmexpress.discovery", "tcp", "rdma",
                "::1", "file", "malloc", "null", "spdk", "java", "\u0000", "999999999999999999999"}[r.nextInt(12)]);
            case 10 -> F.booleanNode(r.nextBoolean());
            case 11 -> F.arrayNode();
            case 12 -> F.objectNode();
            case 13 -> F.numberNode(r.nextInt(70000));
            default -> {
                List<JsonNode> all = new ArrayList<>();
                collect(root, all);
                yield all.get(r.nextInt(all.size())).deepCopy();
            }
        };
    }

    @Override
    public String toString() {
        return name() + " (" + accepted + " documents accepted, " + refused + " refused with messages)";
    }
}
