package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code nvmfctl host}: hosts allowed on a subsystem ({@code /api/v1/subsystems/{nqn}/hosts}). */
@Command(name = "host", description = "Hosts allowed on a subsystem: list, add, remove.",
    subcommands = {HostCommands.List.class, HostCommands.Add.class, HostCommands.Remove.class})
final class HostCommands extends Group {
    static String path(String nqn) {
        return ApiCommand.subsystemPath(nqn) + "/hosts";
    }

    /** The host: {@code -q/--hostnqn}, as nvme-cli spells it. */
    static final class HostNqn {
        @Option(names = {"-q", "--hostnqn"}, required = true, paramLabel = "HOSTNQN", description = "The host's NQN.")
        String hostnqn;
    }

    @Command(name = "list", description = "List the hosts allowed on a subsystem.")
    static final class List extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Override
        public Integer call() {
            JsonNode hosts = api().get(path(subsystem.nqn));
            if (json()) {
                printJson(hosts);
                return 0;
            }
            Table t = new Table("HOSTNQN");
            hosts.forEach(h -> t.row(h));
            t.print(out());
            return 0;
        }
    }

    @Command(name = "add", description = {"Allow a host on a subsystem.",
        "Example: nvmfctl host add -n nqn.2026-11.io.nvmf4j:default -q nqn.2014-08.org.nvmexpress:uuid:..."})
    static final class Add extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Mixin
        HostNqn host;

        @Override
        public Integer call() {
            JsonNode added = api().post(path(subsystem.nqn), object().put("nqn", host.hostnqn));
            if (json()) {
                printJson(added);
            } else {
                say("allowed host " + host.hostnqn + " on " + subsystem.nqn);
            }
            return 0;
        }
    }

    @Command(name = "remove", description = "Disallow a host (its controllers are disconnected).")
    static final class Remove extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Mixin
        HostNqn host;

        @Override
        public Integer call() {
            api().delete(path(subsystem.nqn) + "/" + ApiClient.seg(host.hostnqn));
            done("removed host " + host.hostnqn + " from " + subsystem.nqn, "removed",
                object().put("subsystem", subsystem.nqn).put("host", host.hostnqn));
            return 0;
        }
    }
}
