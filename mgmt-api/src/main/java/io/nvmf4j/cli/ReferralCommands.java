package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code nvmfctl referral}: other discovery services in our discovery log ({@code /api/v1/discovery/referrals}). */
@Command(name = "referral", description = "Discovery referrals (other discovery services named in the discovery "
    + "log): list, add, remove.",
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
                ListenerCommands.table(referrals, false).print(out());
            }
            return 0;
        }
    }

    @Command(name = "add", description = {"Refer hosts to another discovery service.",
        "Example: nvmfctl referral add -t tcp -a 192.0.2.7 -s 8009"})
    static final class Add extends ApiCommand {
        @Mixin
        Address.Referral address;

        @Override
        public Integer call() {
            JsonNode added = api().post(PATH, address.endpoint().body(object()));
            if (json()) {
                printJson(added);
            } else {
                say("added referral " + Address.describe(added));
            }
            return 0;
        }
    }

    @Command(name = "remove", description = "Remove a referral.")
    static final class Remove extends ApiCommand {
        @Mixin
        Address.Referral address;

        @Override
        public Integer call() {
            Address.Endpoint e = address.endpoint();
            api().delete(e.path(PATH));
            done("removed referral " + e, "removed", object().set("referral", e.body(object())));
            return 0;
        }
    }
}
