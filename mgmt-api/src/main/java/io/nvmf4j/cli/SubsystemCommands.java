package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.ArrayList;
import java.util.Locale;

/** {@code nvmfctl subsystem}: NVM subsystems ({@code /api/v1/subsystems}). */
@Command(name = "subsystem", description = "NVM subsystems: list, get, create, delete, allow-any-host.",
    subcommands = {SubsystemCommands.List.class, SubsystemCommands.Get.class, SubsystemCommands.Create.class,
        SubsystemCommands.Delete.class, SubsystemCommands.AllowAnyHost.class})
final class SubsystemCommands extends Group {
    static final String PATH = ApiClient.V1 + "/subsystems";

    /** "tcp 127.0.0.1:4420", "tcp [::1]:4421" for each listener of a subsystem. */
    static java.util.List<String> listeners(JsonNode s) {
        java.util.List<String> l = new ArrayList<>();
        s.path("listeners").forEach(x -> l.add(Address.describe(x)));
        return l;
    }

    @Command(name = "list", description = "List subsystems.")
    static final class List extends ApiCommand {
        @Override
        public Integer call() {
            JsonNode subsystems = api().get(PATH);
            if (json()) {
                printJson(subsystems);
                return 0;
            }
            Table t = new Table("NQN", "SERIAL", "MODEL", "ANY-HOST", "HOSTS", "NAMESPACES", "LISTENERS");
            for (JsonNode s : subsystems) {
                java.util.List<String> l = listeners(s);
                t.row(s.get("nqn"), s.get("serial"), s.get("model"), s.path("allowAnyHost").asBoolean() ? "yes" : "no",
                    s.path("hosts").size(), s.path("namespaces").size(), l.isEmpty() ? "-" : String.join(", ", l));
            }
            t.print(out());
            return 0;
        }
    }

    @Command(name = "get", description = "Show one subsystem with its namespaces, hosts and listeners.")
    static final class Get extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Override
        public Integer call() {
            JsonNode s = api().get(subsystemPath(subsystem.nqn));
            if (json()) {
                printJson(s);
                return 0;
            }
            ObjectNode view = object();
            s.fields().forEachRemaining(e -> {
                if (!e.getKey().equals("namespaces") && !e.getKey().equals("listeners")) {
                    view.set(e.getKey(), e.getValue());
                }
            });
            ArrayNode ns = view.putArray("namespaces");
            s.path("namespaces").forEach(n -> ns.add(n.path("nsid").asInt() + ":" + n.path("bdev").asText()));
            ArrayNode l = view.putArray("listeners");
            listeners(s).forEach(l::add);
            Table.printObject(out(), view);
            return 0;
        }
    }

    @Command(name = "create", description = {"Create a subsystem (no namespaces: add them with 'ns add'; no "
        + "listeners: add them with 'listener add').",
        "Example: nvmfctl subsystem create -n nqn.2026-11.io.nvmf4j:vol1 -q nqn.2014-08.org.nvmexpress:uuid:..."})
    static final class Create extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Option(names = "--serial", paramLabel = "SERIAL", description = "Serial number (1..20 ASCII characters; generated when absent).")
        String serial;

        @Option(names = "--model", paramLabel = "MODEL", description = "Model number (default: nvmf4j).")
        String model;

        @Option(names = "--allow-any-host", description = "Admit any host NQN (otherwise only those added).")
        boolean allowAnyHost;

        @Option(names = {"-q", "--hostnqn"}, paramLabel = "HOSTNQN",
            description = "A host allowed to connect (repeatable).")
        java.util.List<String> hosts = new ArrayList<>();

        @Option(names = "--host", hidden = true, paramLabel = "HOSTNQN", description = "Old spelling of --hostnqn.")
        java.util.List<String> oldHosts = new ArrayList<>();

        @Option(names = "--max-namespaces", paramLabel = "N", description = "Most namespaces it may hold.")
        Integer maxNamespaces;

        @Option(names = "--min-cntlid", paramLabel = "ID", description = "Lowest controller ID it gives out.")
        Integer minCntlid;

        @Option(names = "--max-cntlid", paramLabel = "ID", description = "Highest controller ID it gives out.")
        Integer maxCntlid;

        @Override
        public Integer call() {
            ObjectNode body = object().put("nqn", subsystem.nqn).put("allowAnyHost", allowAnyHost);
            if (serial != null) {
                body.put("serial", serial);
            }
            if (model != null) {
                body.put("model", model);
            }
            ArrayNode h = body.putArray("hosts");
            hosts.forEach(h::add);
            oldHosts.forEach(h::add);
            if (maxNamespaces != null) {
                body.put("maxNamespaces", maxNamespaces);
            }
            if (minCntlid != null) {
                body.put("minCntlid", minCntlid);
            }
            if (maxCntlid != null) {
                body.put("maxCntlid", maxCntlid);
            }
            printOne(api().post(PATH, body));
            return 0;
        }
    }

    @Command(name = "delete", description = "Delete a subsystem (connected hosts are disconnected).")
    static final class Delete extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Override
        public Integer call() {
            api().delete(subsystemPath(subsystem.nqn));
            done("deleted subsystem " + subsystem.nqn, "deleted", object().put("subsystem", subsystem.nqn));
            return 0;
        }
    }

    @Command(name = "allow-any-host", description = {"Admit any host (yes) or only the allowed hosts (no).",
        "Example: nvmfctl subsystem allow-any-host -n nqn.2026-11.io.nvmf4j:default no"})
    static final class AllowAnyHost extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Parameters(paramLabel = "yes|no", description = "yes, true, on, 1 or no, false, off, 0.")
        String value;

        @Override
        public Integer call() {
            boolean allow = switch (value.toLowerCase(Locale.ROOT)) {
                case "yes", "true", "on", "1" -> true;
                case "no", "false", "off", "0" -> false;
                default -> throw CliException.usage("allow-any-host takes yes or no, got '" + value + "'");
            };
            JsonNode s = api().patch(subsystemPath(subsystem.nqn), object().put("allowAnyHost", allow));
            if (json()) {
                printJson(s);
            } else {
                say(subsystem.nqn + ": allow any host " + (s.path("allowAnyHost").asBoolean() ? "yes" : "no"));
            }
            return 0;
        }
    }
}
