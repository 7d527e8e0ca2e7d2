package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code nvmfctl controller}: connected hosts of a subsystem ({@code /api/v1/subsystems/{nqn}/controllers}). */
@Command(name = "controller", description = "Controllers (connected hosts) of a subsystem: list.",
    subcommands = {ControllerCommands.List.class})
final class ControllerCommands extends Group {
    static String path(String nqn) {
        return ApiCommand.subsystemPath(nqn) + "/controllers";
    }

    /** The I/O queues of a controller (its queues less the admin queue). */
    static int ioQueues(JsonNode c) {
        return Math.max(0, c.path("queues").size() - 1);
    }

    @Command(name = "list", description = "List the controllers of a subsystem with their queues and keep-alive.")
    static final class List extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Override
        public Integer call() {
            JsonNode controllers = api().get(path(subsystem.nqn));
            if (json()) {
                printJson(controllers);
                return 0;
            }
            Table t = new Table("CNTLID", "HOSTNQN", "ADDRESS", "KATO-MS", "IO-QUEUES");
            controllers.forEach(c -> t.row(c.get("cntlid"), c.get("hostnqn"), Address.peer(c.path("address").asText(null)),
                c.get("kato"), ioQueues(c)));
            t.print(out());
            return 0;
        }
    }
}
