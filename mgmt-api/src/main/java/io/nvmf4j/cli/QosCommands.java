package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code nvmfctl qos}: QoS limits of a namespace, of a host on a namespace or subsystem
 * ({@code /api/v1/subsystems/{nqn}[/namespaces/{nsid}]/qos}), and QoS groups ({@code /api/v1/qos-groups}).
 */
@Command(name = "qos", description = "QoS limits, changed live: show, set, remove (a namespace's, or a host's on a "
    + "namespace or subsystem); group-list, group-add, group-set, group-remove (namespaces sharing limits).",
    subcommands = {QosCommands.Show.class, QosCommands.Set.class, QosCommands.Remove.class, QosCommands.GroupList.class,
        QosCommands.GroupAdd.class, QosCommands.GroupSet.class, QosCommands.GroupRemove.class})
final class QosCommands extends Group {
    static final String GROUPS = "/api/v1/qos-groups";

    /** Where the limits live: a namespace (--nsid), a host on it (-q too), or a host on the subsystem (-q alone). */
    static final class Target {
        @Mixin
        SubsystemNqn subsystem;

        @Option(names = "--nsid", paramLabel = "N", description = "The namespace (absent: the subsystem).")
        Integer nsid;

        @Option(names = {"-q", "--hostnqn"}, paramLabel = "HOSTNQN", description = "Limit this host's I/O only.")
        String hostnqn;

        String qosPath() {
            String base = ApiCommand.subsystemPath(subsystem.nqn);
            return (nsid == null ? base : base + "/namespaces/" + nsid) + "/qos";
        }

        String path() {
            if (nsid == null && hostnqn == null) {
                throw new CliException(CliException.USAGE, "a subsystem's QoS limits hosts only: give --nsid, -q or both");
            }
            return hostnqn == null ? qosPath() : qosPath() + "/hosts/" + ApiClient.seg(hostnqn);
        }

        String describe() {
            String where = nsid == null ? subsystem.nqn : "namespace " + nsid + " of " + subsystem.nqn;
            return hostnqn == null ? where : "host " + hostnqn + " on " + where;
        }
    }

    /** The four limits; an option not given is unlimited. */
    static final class Limits {
        @Option(names = "--iops", paramLabel = "N", description = "I/O commands per second (0: unlimited).")
        Long iops;

        @Option(names = "--read-mbps", paramLabel = "MB", description = "Read MB (2^20 bytes) per second.")
        Long readMBps;

        @Option(names = "--write-mbps", paramLabel = "MB", description = "Written MB (2^20 bytes) per second.")
        Long writeMBps;

        @Option(names = "--rw-mbps", paramLabel = "MB", description = "Read and written MB per second together.")
        Long rwMBps;

        ObjectNode into(ObjectNode o) {
            put(o, "iops", iops);
            put(o, "readMBps", readMBps);
            put(o, "writeMBps", writeMBps);
            put(o, "rwMBps", rwMBps);
            return o;
        }

        private static void put(ObjectNode o, String name, Long v) {
            if (v != null) {
                o.put(name, v);
            }
        }
    }

    @Command(name = "show", description = "Show the QoS of a namespace (--nsid) or a subsystem's per-host limits.")
    static final class Show extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Option(names = "--nsid", paramLabel = "N", description = "The namespace (absent: the subsystem).")
        Integer nsid;

        @Override
        public Integer call() {
            String base = ApiCommand.subsystemPath(subsystem.nqn);
            printJson(api().get((nsid == null ? base : base + "/namespaces/" + nsid) + "/qos"));
            return 0;
        }
    }

    @Command(name = "set", description = {"Set or replace limits, live (I/O over a limit waits; none fails).",
        "Example: nvmfctl qos set -n nqn.2026-11.io.nvmf4j:default --nsid 1 --iops 20000 --rw-mbps 200",
        "Example: nvmfctl qos set -n nqn.2026-11.io.nvmf4j:default -q nqn.2014-08.org.nvmexpress:uuid:... --iops 5000"})
    static final class Set extends ApiCommand {
        @Mixin
        Target target;

        @Mixin
        Limits limits;

        @Override
        public Integer call() {
            JsonNode set = api().put(target.path(), limits.into(object()));
            if (json()) {
                printJson(set);
            } else {
                say("QoS of " + target.describe() + ": " + set);
            }
            return 0;
        }
    }

    @Command(name = "remove", description = "Remove limits (a namespace's own: its hosts' stay).")
    static final class Remove extends ApiCommand {
        @Mixin
        Target target;

        @Override
        public Integer call() {
            api().delete(target.path());
            done("removed the QoS limits of " + target.describe(), "removed",
                object().put("subsystem", target.subsystem.nqn));
            return 0;
        }
    }

    @Command(name = "group-list", description = "List the QoS groups.")
    static final class GroupList extends ApiCommand {
        @Override
        public Integer call() {
            JsonNode groups = api().get(GROUPS);
            if (json()) {
                printJson(groups);
                return 0;
            }
            Table t = new Table("NAME", "NAMESPACES", "LIMITS");
            groups.forEach(g -> {
                StringBuilder ns = new StringBuilder();
                g.get("namespaces").forEach(m -> ns.append(ns.length() == 0 ? "" : " ")
                    .append(m.get("nqn").asText()).append('/').append(m.get("nsid").asInt()));
                t.row(g.get("name"), ns.toString(), g.get("limits"));
            });
            t.print(out());
            return 0;
        }
    }

    /** A group's name, namespaces and limits. */
    abstract static class GroupBody extends ApiCommand {
        @Parameters(index = "0", paramLabel = "NAME", description = "The group's name.")
        String name;

        @Option(names = "--ns", required = true, paramLabel = "NQN/NSID", description = "A namespace of the group "
            + "(repeat the option).")
        java.util.List<String> namespaces;

        @Mixin
        Limits limits;

        ObjectNode body() {
            ObjectNode o = object().put("name", name);
            ArrayNode list = o.putArray("namespaces");
            for (String n : namespaces) {
                int slash = n.lastIndexOf('/');
                if (slash < 0) {
                    throw new CliException(CliException.USAGE, "--ns: expected NQN/NSID, got " + n);
                }
                try {
                    list.addObject().put("nqn", n.substring(0, slash)).put("nsid",
                        Integer.parseInt(n.substring(slash + 1)));
                } catch (NumberFormatException e) {
                    throw new CliException(CliException.USAGE, "--ns: the nsid after the last / must be a number, got " + n);
                }
            }
            limits.into(o.putObject("limits"));
            return o;
        }
    }

    @Command(name = "group-add", description = {"Create a QoS group: its namespaces' I/O together shares its limits.",
        "Example: nvmfctl qos group-add tenant-a --ns nqn.2026-11.io.nvmf4j:default/1 "
            + "--ns nqn.2026-11.io.nvmf4j:default/2 --iops 50000"})
    static final class GroupAdd extends GroupBody {
        @Override
        public Integer call() {
            printOne(api().post(GROUPS, body()));
            return 0;
        }
    }

    @Command(name = "group-set", description = "Replace a QoS group's namespaces and limits, live.")
    static final class GroupSet extends GroupBody {
        @Override
        public Integer call() {
            printOne(api().put(GROUPS + "/" + ApiClient.seg(name), body()));
            return 0;
        }
    }

    @Command(name = "group-remove", description = "Remove a QoS group (its namespaces are no longer limited together).")
    static final class GroupRemove extends ApiCommand {
        @Parameters(index = "0", paramLabel = "NAME", description = "The group's name.")
        String name;

        @Override
        public Integer call() {
            api().delete(GROUPS + "/" + ApiClient.seg(name));
            done("removed QoS group " + name, "removed", object().put("group", name));
            return 0;
        }
    }
}
