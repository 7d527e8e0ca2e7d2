package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code nvmfctl ls}: the whole target as one tree, as nvmetcli's {@code ls} shows the kernel's: subsystems
 * with their namespaces, hosts, listeners and controllers; bdevs; pools with their volumes; discovery referrals.
 * {@code --json}: the same as one document, the API's objects with each subsystem's {@code controllers} added and
 * each pool's {@code volumes} (a count in the API) given as the list of its volumes.
 */
@Command(name = "ls", description = {"Show the whole target as a tree, as 'nvmetcli ls' does: subsystems with "
    + "their namespaces (nsid, bdev, size, uuid), hosts, listeners and controllers; bdevs; pools with their "
    + "volumes; discovery referrals.",
    "With --json: {\"subsystems\": [... each with \"controllers\"], \"bdevs\": [...], \"pools\": [... each with "
        + "its \"volumes\" listed], \"referrals\": [...]}."})
final class LsCommand extends ApiCommand {
    @Override
    public Integer call() {
        JsonNode subsystems = api().get(SubsystemCommands.PATH);
        ObjectNode doc = object();
        ArrayNode subs = doc.putArray("subsystems");
        for (JsonNode s : subsystems) {
            ObjectNode copy = s.deepCopy();
            copy.set("controllers", api().get(ControllerCommands.path(s.path("nqn").asText())));
            subs.add(copy);
        }
        doc.set("bdevs", api().get(BdevCommands.PATH));
        ArrayNode pools = doc.putArray("pools");
        for (JsonNode p : api().get(PoolCommands.PATH)) {
            ObjectNode copy = p.deepCopy();
            copy.set("volumes", api().get(PoolCommands.volumes(p.path("name").asText())));
            pools.add(copy);
        }
        doc.set("referrals", api().get(ReferralCommands.PATH));
        if (json()) {
            printJson(doc);
        } else {
            tree(doc, api().url()).print(out());
        }
        return 0;
    }

    /** The tree of an {@code ls --json} document. */
    static Tree tree(JsonNode doc, String url) {
        Map<String, String> sizes = new HashMap<>();
        doc.path("bdevs").forEach(b -> sizes.put(b.path("name").asText(), size(b)));
        doc.path("pools").forEach(p -> p.path("volumes").forEach(v -> sizes.put(v.path("bdev").asText(),
            Table.size(v.path("provisionedBytes").asLong()))));
        Tree root = new Tree("/", url);
        Tree subsystems = root.add("subsystems", count(doc.path("subsystems")));
        for (JsonNode s : doc.path("subsystems")) {
            Tree sub = subsystems.add(s.path("nqn").asText(), join("serial " + s.path("serial").asText("-"),
                "model " + s.path("model").asText("-")));
            Tree ns = sub.add("namespaces", count(s.path("namespaces")));
            for (JsonNode n : s.path("namespaces")) {
                String bdev = n.path("bdev").asText();
                ns.add(n.path("nsid").asText(), join("bdev " + bdev, sizes.getOrDefault(bdev, "no such bdev"),
                    "uuid " + n.path("uuid").asText("-")));
            }
            Tree hosts = sub.add("hosts", s.path("allowAnyHost").asBoolean()
                ? "any host" + (s.path("hosts").isEmpty() ? "" : "; " + s.path("hosts").size() + " listed")
                : count(s.path("hosts")));
            s.path("hosts").forEach(h -> hosts.add(h.asText(), null));
            Tree listeners = sub.add("listeners", count(s.path("listeners")));
            s.path("listeners").forEach(l -> listeners.add(Address.describe(l), ListenerCommands.state(l)));
            Tree controllers = sub.add("controllers", count(s.path("controllers")));
            for (JsonNode c : s.path("controllers")) {
                int io = ControllerCommands.ioQueues(c);
                controllers.add(c.path("cntlid").asText(), join("host " + c.path("hostnqn").asText(),
                    io + " I/O queue" + (io == 1 ? "" : "s"), Address.peer(c.path("address").asText(null))));
            }
        }
        Tree bdevTree = root.add("bdevs", count(doc.path("bdevs")));
        for (JsonNode b : doc.path("bdevs")) {
            bdevTree.add(b.path("name").asText(), join(b.path("type").asText(), size(b),
                b.path("blockSize").asText() + " B blocks", b.hasNonNull("path") ? b.get("path").asText() : null,
                b.hasNonNull("usedBy") ? "used by " + Table.text(b.get("usedBy")) : "unused"));
        }
        Tree poolTree = root.add("pools", count(doc.path("pools")));
        for (JsonNode p : doc.path("pools")) {
            Tree pool = poolTree.add(p.path("name").asText(), join(p.path("kind").asText(),
                Table.size(p.path("size").asLong()), Table.size(p.path("used").asLong()) + " used",
                Table.size(p.path("free").asLong()) + " free", p.path("path").asText()));
            for (JsonNode v : p.path("volumes")) {
                pool.add(v.path("name").asText(), join(Table.size(v.path("provisionedBytes").asLong()),
                    v.path("thin").asBoolean() ? "thin" : "thick",
                    Table.size(v.path("allocatedBytes").asLong()) + " allocated",
                    v.hasNonNull("origin") ? "clone of " + v.get("origin").asText() : null,
                    v.path("snapshots").isEmpty() ? null : "snapshots " + Table.text(v.get("snapshots")),
                    v.hasNonNull("namespace") ? "used by " + v.get("namespace").asText() : "unused"));
            }
        }
        Tree referrals = root.add("referrals", count(doc.path("referrals")));
        doc.path("referrals").forEach(r -> referrals.add(Address.describe(r), null));
        return root;
    }

    /** A bdev's capacity: "256 MiB", or "file size" for a file bdev that takes its file's. */
    private static String size(JsonNode b) {
        long blocks = b.path("numBlocks").asLong();
        if (blocks == 0 && "file".equals(b.path("type").asText())) {
            return "file size";
        }
        return Table.size(blocks * b.path("blockSize").asLong());
    }

    private static String count(JsonNode list) {
        return String.valueOf(list.size());
    }

    private static String join(String... parts) {
        List<String> l = new ArrayList<>();
        for (String p : parts) {
            if (p != null) {
                l.add(p);
            }
        }
        return String.join(", ", l);
    }
}
