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
 * with their namespaces, hosts, listeners and controllers; bdevs; discovery referrals. {@code --json}: the same
 * as one document, the API's objects with each subsystem's {@code controllers} added.
 */
@Command(name = "ls", description = {"Show the whole target as a tree, as 'nvmetcli ls' does: subsystems with "
    + "their namespaces (nsid, bdev, size, uuid), hosts, listeners and controllers; bdevs; discovery referrals.",
    "With --json: {\"subsystems\": [... each with \"controllers\"], \"bdevs\": [...], \"referrals\": [...]}."})
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
        Map<String, JsonNode> bdevs = new HashMap<>();
        doc.path("bdevs").forEach(b -> bdevs.put(b.path("name").asText(), b));
        Tree root = new Tree("/", url);
        Tree subsystems = root.add("subsystems", count(doc.path("subsystems")));
        for (JsonNode s : doc.path("subsystems")) {
            Tree sub = subsystems.add(s.path("nqn").asText(), join("serial " + s.path("serial").asText("-"),
                "model " + s.path("model").asText("-")));
            Tree ns = sub.add("namespaces", count(s.path("namespaces")));
            for (JsonNode n : s.path("namespaces")) {
                String bdev = n.path("bdev").asText();
                ns.add(n.path("nsid").asText(), join("bdev " + bdev, size(bdevs.get(bdev)),
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
        Tree referrals = root.add("referrals", count(doc.path("referrals")));
        doc.path("referrals").forEach(r -> referrals.add(Address.describe(r), null));
        return root;
    }

    /** A bdev's capacity: "256 MiB", "file size" for a file bdev that takes its file's, "?" when unknown. */
    private static String size(JsonNode b) {
        if (b == null) {
            return "no such bdev";
        }
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
