package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code nvmfctl referral}: other discovery services in our discovery log ({@code /api/v1/discovery/referrals}). */
@Command(name = "referral", description = "Discovery referrals: list, add, remove.",
    subcommands = {ReferralCommands.List.class, ReferralCommands.Add.class, ReferralCommands.Remove.class})
final class ReferralCommands extends Group {
    static final String PATH = ApiClient.V1 + "/discovery/referrals";

    @Command(name = "list", description = "List the referrals of the discovery service.")
    static final class List extends ApiCommand {
        @Override
        public Integer call() {
            JsonNode referrals = api().get(PATH);
            if (json()) {
                printJson(referrals);
            } else {
                ListenerCommands.table(referrals).print(out());
            }
            return 0;
        }
    }

    @Command(name = "add", description = "Refer hosts to another discovery service.")
    static final class Add extends ApiCommand {
        @Mixin
        Address address;

        @Option(names = {"-s", "--port"}, paramLabel = "PORT", defaultValue = "8009",
            description = "Port (default: ${DEFAULT-VALUE}).")
        int port;

        @Override
        public Integer call() {
            printOne(api().post(PATH, address.body(object(), port)));
            return 0;
        }
    }

    @Command(name = "remove", description = "Remove a referral.")
    static final class Remove extends ApiCommand {
        @Mixin
        Address address;

        @Option(names = {"-s", "--port"}, paramLabel = "PORT", defaultValue = "8009",
            description = "Port (default: ${DEFAULT-VALUE}).")
        int port;

        @Override
        public Integer call() {
            api().delete(address.path(PATH, port));
            done("removed referral " + address + ":" + port);
            return 0;
        }
    }
}
