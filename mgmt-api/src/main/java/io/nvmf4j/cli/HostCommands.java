package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code nvmfctl host}: hosts allowed on a subsystem ({@code /api/v1/subsystems/{nqn}/hosts}). */
@Command(name = "host", description = "Hosts allowed on a subsystem: list, add, remove.",
    subcommands = {HostCommands.List.class, HostCommands.Add.class, HostCommands.Remove.class})
final class HostCommands extends Group {
    static String path(String nqn) {
        return ApiCommand.subsystemPath(nqn) + "/hosts";
    }

    @Command(name = "list", description = "List the hosts allowed on a subsystem.")
    static final class List extends ApiCommand {
        @Option(names = "--nqn", required = true, paramLabel = "NQN", description = "The subsystem.")
        String nqn;

        @Override
        public Integer call() {
            JsonNode hosts = api().get(path(nqn));
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

    @Command(name = "add", description = "Allow a host on a subsystem.")
    static final class Add extends ApiCommand {
        @Option(names = "--nqn", required = true, paramLabel = "NQN", description = "The subsystem.")
        String nqn;

        @Parameters(paramLabel = "HOSTNQN")
        String host;

        @Override
        public Integer call() {
            JsonNode added = api().post(path(nqn), object().put("nqn", host));
            if (json()) {
                printJson(added);
            } else {
                done("allowed host " + host + " on " + nqn);
            }
            return 0;
        }
    }

    @Command(name = "remove", description = "Disallow a host (its controllers are disconnected).")
    static final class Remove extends ApiCommand {
        @Option(names = "--nqn", required = true, paramLabel = "NQN", description = "The subsystem.")
        String nqn;

        @Parameters(paramLabel = "HOSTNQN")
        String host;

        @Override
        public Integer call() {
            api().delete(path(nqn) + "/" + ApiClient.seg(host));
            done("removed host " + host + " from " + nqn);
            return 0;
        }
    }
}
