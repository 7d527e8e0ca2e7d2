package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code nvmfctl controller}: connected hosts of a subsystem ({@code /api/v1/subsystems/{nqn}/controllers}). */
@Command(name = "controller", description = "Controllers (connected hosts) of a subsystem: list.",
    subcommands = {ControllerCommands.List.class})
final class ControllerCommands extends Group {
    @Command(name = "list", description = "List the controllers of a subsystem with their queues and keep-alive.")
    static final class List extends ApiCommand {
        @Option(names = "--nqn", required = true, paramLabel = "NQN", description = "The subsystem.")
        String nqn;

        @Override
        public Integer call() {
            JsonNode controllers = api().get(subsystemPath(nqn) + "/controllers");
            if (json()) {
                printJson(controllers);
                return 0;
            }
            Table t = new Table("CNTLID", "HOSTNQN", "ADDRESS", "KATO-MS", "IO-QUEUES");
            controllers.forEach(c -> t.row(c.get("cntlid"), c.get("hostnqn"), peer(c.path("address").asText(null)),
                c.get("kato"),
                Math.max(0, c.path("queues").size() - 1)));
            t.print(out());
            return 0;
        }

        /** "127.0.0.1:51268" for the API's "/127.0.0.1:51268" (a socket address without host name). */
        private static String peer(String address) {
            return address != null && address.startsWith("/") ? address.substring(1) : address;
        }
    }
}
