package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code nvmfctl ns}: namespaces of a subsystem ({@code /api/v1/subsystems/{nqn}/namespaces}). */
@Command(name = "ns", description = "Namespaces of a subsystem: list, add, remove; per-host masking: host-add, "
    + "host-remove; ana-group.",
    subcommands = {NamespaceCommands.List.class, NamespaceCommands.Add.class, NamespaceCommands.Remove.class,
        NamespaceCommands.HostAdd.class, NamespaceCommands.HostRemove.class, NamespaceCommands.AnaGroup.class})
final class NamespaceCommands extends Group {
    static String path(String nqn) {
        return ApiCommand.subsystemPath(nqn) + "/namespaces";
    }

    @Command(name = "list", description = "List the namespaces of a subsystem.")
    static final class List extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Override
        public Integer call() {
            JsonNode namespaces = api().get(path(subsystem.nqn));
            if (json()) {
                printJson(namespaces);
                return 0;
            }
            Table t = new Table("NSID", "BDEV", "NGUID", "UUID");
            namespaces.forEach(n -> t.row(n.get("nsid"), n.get("bdev"), n.get("nguid"), n.get("uuid")));
            t.print(out());
            return 0;
        }
    }

    @Command(name = "add", description = {"Add a namespace on a block device; connected hosts see it at once.",
        "Example: nvmfctl ns add -n nqn.2026-11.io.nvmf4j:default -b m1"})
    static final class Add extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Option(names = {"-b", "--bdev"}, required = true, paramLabel = "NAME", description = "The block device.")
        String bdev;

        @Option(names = "--nsid", paramLabel = "N", description = "Namespace ID (default: the lowest free).")
        Integer nsid;

        @Option(names = "--nguid", paramLabel = "HEX32", description = "NGUID, 32 hex digits (default: generated).")
        String nguid;

        @Option(names = "--uuid", paramLabel = "UUID", description = "UUID (default: generated).")
        String uuid;

        @Option(names = "--host", paramLabel = "HOSTNQN", description = "Mask the namespace: only these hosts see it "
            + "(repeat the option; default: every host the subsystem admits).")
        java.util.List<String> hosts;

        @Option(names = "--masked", description = "Mask the namespace even with no --host: no host sees it until "
            + "'ns host-add'.")
        boolean masked;

        @Option(names = "--reservations", paramLabel = "MODE", description = "Where its persistent reservation "
            + "lives: shared (in the rbd image: every gateway that exports it sees one state), local (this instance "
            + "only: right when no other instance exports it) or off (no reservations advertised). Default: shared on "
            + "an rbd bdev, else local (off in a subsystem with a narrowed cntlid range).")
        String reservations;

        @Override
        public Integer call() {
            ObjectNode body = object().put("bdev", bdev);
            if (nsid != null) {
                body.put("nsid", nsid);
            }
            if (nguid != null) {
                body.put("nguid", nguid.replace("-", ""));
            }
            if (uuid != null) {
                body.put("uuid", uuid);
            }
            if (reservations != null) {
                body.put("reservations", reservations);
            }
            if (masked || hosts != null) {
                var list = body.putArray("hosts");
                if (hosts != null) {
                    hosts.forEach(list::add);
                }
            }
            printOne(api().post(path(subsystem.nqn), body));
            return 0;
        }
    }

    @Command(name = "remove", description = "Remove a namespace (the block device stays).")
    static final class Remove extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Option(names = "--nsid", required = true, paramLabel = "N", description = "The namespace ID.")
        int nsid;

        @Override
        public Integer call() {
            api().delete(path(subsystem.nqn) + "/" + nsid);
            done("removed namespace " + nsid + " from " + subsystem.nqn, "removed",
                object().put("subsystem", subsystem.nqn).put("nsid", nsid));
            return 0;
        }
    }

    @Command(name = "ana-group", description = {"Move a namespace to another ANA group while it serves (connected "
        + "hosts read the ANA log page again).",
        "Example: nvmfctl ns ana-group -n nqn.2026-11.io.nvmf4j:default --nsid 1 --group 2"})
    static final class AnaGroup extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Option(names = "--nsid", required = true, paramLabel = "N", description = "The namespace ID.")
        int nsid;

        @Option(names = {"-g", "--group"}, required = true, paramLabel = "GROUP", description = "The ANA group id.")
        int group;

        @Override
        public Integer call() {
            JsonNode n = api().patch(path(subsystem.nqn) + "/" + nsid, object().put("anaGroup", group));
            if (json()) {
                printJson(n);
            } else {
                say("namespace " + nsid + " of " + subsystem.nqn + " in ANA group " + n.get("anaGroup").asInt());
            }
            return 0;
        }
    }

    static String hostsPath(String nqn, int nsid) {
        return path(nqn) + "/" + nsid + "/hosts";
    }

    @Command(name = "host-add", description = {"Show a masked namespace to one more host (its controllers get the "
        + "changed-namespace event).",
        "Example: nvmfctl ns host-add -n nqn.2026-11.io.nvmf4j:default --nsid 2 -q nqn.2014-08.org.nvmexpress:uuid:..."})
    static final class HostAdd extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Option(names = "--nsid", required = true, paramLabel = "N", description = "The namespace ID.")
        int nsid;

        @Mixin
        HostCommands.HostNqn host;

        @Override
        public Integer call() {
            JsonNode added = api().post(hostsPath(subsystem.nqn, nsid), object().put("nqn", host.hostnqn));
            if (json()) {
                printJson(added);
            } else {
                say("namespace " + nsid + " of " + subsystem.nqn + " visible to " + host.hostnqn);
            }
            return 0;
        }
    }

    @Command(name = "host-remove", description = "Mask a namespace from a host (inactive for it; its controllers get "
        + "the changed-namespace event).")
    static final class HostRemove extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Option(names = "--nsid", required = true, paramLabel = "N", description = "The namespace ID.")
        int nsid;

        @Mixin
        HostCommands.HostNqn host;

        @Override
        public Integer call() {
            api().delete(hostsPath(subsystem.nqn, nsid) + "/" + ApiClient.seg(host.hostnqn));
            done("namespace " + nsid + " of " + subsystem.nqn + " masked from " + host.hostnqn, "masked",
                object().put("subsystem", subsystem.nqn).put("nsid", nsid).put("host", host.hostnqn));
            return 0;
        }
    }
}
