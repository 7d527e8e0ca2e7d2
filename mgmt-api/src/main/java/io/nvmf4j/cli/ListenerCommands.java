package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code nvmfctl listener}: transport addresses of a subsystem ({@code /api/v1/subsystems/{nqn}/listeners}). */
@Command(name = "listener", description = "Listeners of a subsystem: list, add, remove.",
    subcommands = {ListenerCommands.List.class, ListenerCommands.Add.class, ListenerCommands.Remove.class})
final class ListenerCommands extends Group {
    static String path(String nqn) {
        return ApiCommand.subsystemPath(nqn) + "/listeners";
    }

    static Table table(JsonNode list) {
        Table t = new Table("TRANSPORT", "ADDRESS", "PORT");
        list.forEach(l -> t.row(l.get("transport"), l.get("address"), l.get("port")));
        return t;
    }

    @Command(name = "list", description = "List the listeners of a subsystem.")
    static final class List extends ApiCommand {
        @Option(names = "--nqn", required = true, paramLabel = "NQN", description = "The subsystem.")
        String nqn;

        @Override
        public Integer call() {
            JsonNode listeners = api().get(path(nqn));
            if (json()) {
                printJson(listeners);
            } else {
                table(listeners).print(out());
            }
            return 0;
        }
    }

    @Command(name = "add", description = "Listen for a subsystem on an address (the discovery service too).")
    static final class Add extends ApiCommand {
        @Option(names = "--nqn", required = true, paramLabel = "NQN", description = "The subsystem.")
        String nqn;

        @Mixin
        Address address;

        @Option(names = {"-s", "--port"}, paramLabel = "PORT", defaultValue = "4420",
            description = "Port (default: ${DEFAULT-VALUE}).")
        int port;

        @Override
        public Integer call() {
            printOne(api().post(path(nqn), address.body(object(), port)));
            return 0;
        }
    }

    @Command(name = "remove", description = "Stop listening for a subsystem on an address.")
    static final class Remove extends ApiCommand {
        @Option(names = "--nqn", required = true, paramLabel = "NQN", description = "The subsystem.")
        String nqn;

        @Mixin
        Address address;

        @Option(names = {"-s", "--port"}, paramLabel = "PORT", defaultValue = "4420",
            description = "Port (default: ${DEFAULT-VALUE}).")
        int port;

        @Override
        public Integer call() {
            api().delete(address.path(path(nqn), port));
            done("removed listener " + address + ":" + port + " from " + nqn);
            return 0;
        }
    }
}
