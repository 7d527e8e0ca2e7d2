package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code nvmfctl listener}: transport addresses of a subsystem ({@code /api/v1/subsystems/{nqn}/listeners}). */
@Command(name = "listener", description = "Listeners (transport addresses) of a subsystem: list, add, remove; ANA "
    + "states.", subcommands = {ListenerCommands.List.class, ListenerCommands.Add.class, ListenerCommands.Remove.class,
    ListenerCommands.AnaState.class})
final class ListenerCommands extends Group {
    static String path(String nqn) {
        return ApiCommand.subsystemPath(nqn) + "/listeners";
    }

    /** TRANSPORT and ADDRESS (address:port, IPv6 in brackets) of referrals, and of listeners with STATE. */
    static Table table(JsonNode list, boolean withState) {
        Table t = withState ? new Table("TRANSPORT", "ADDRESS", "STATE") : new Table("TRANSPORT", "ADDRESS");
        for (JsonNode l : list) {
            String address = Address.hostPort(l.path("address").asText(), Address.port(l));
            if (withState) {
                String state = state(l);
                t.row(l.get("transport"), address, state == null ? "-" : state);
            } else {
                t.row(l.get("transport"), address);
            }
        }
        return t;
    }

    /** "live", or "failed: no RDMA device" with the cause the API gives; null without a state. */
    static String state(JsonNode l) {
        if (!l.hasNonNull("state")) {
            return null;
        }
        String cause = l.hasNonNull("cause") ? l.get("cause").asText()
            : l.hasNonNull("reason") ? l.get("reason").asText() : null;
        return l.get("state").asText() + (cause == null ? "" : ": " + cause);
    }

    @Command(name = "list", description = "List the listeners of a subsystem.")
    static final class List extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Override
        public Integer call() {
            JsonNode listeners = api().get(path(subsystem.nqn));
            if (json()) {
                printJson(listeners);
            } else {
                table(listeners, true).print(out());
            }
            return 0;
        }
    }

    @Command(name = "add", description = {"Listen for a subsystem on an address (the discovery service listens there "
        + "too).", "Example: nvmfctl listener add -n nqn.2026-11.io.nvmf4j:default -a ::1 -s 4421",
        "         nvmfctl listener add -n ... -a 10.0.0.1 -s 4420 --secure-channel required"})
    static final class Add extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Mixin
        Address.Listener address;

        @Option(names = "--secure-channel", paramLabel = "none|optional|required", description = "NVMe/TCP TLS 1.3 "
            + "with a PSK (the hosts' --tls-key): required refuses plain connections, optional takes both; default "
            + "none.")
        String secureChannel;

        @Override
        public Integer call() {
            ObjectNode body = address.endpoint().body(object());
            if (secureChannel != null) {
                body.put("secureChannel", secureChannel);
            }
            JsonNode added = api().post(path(subsystem.nqn), body);
            if (json()) {
                printJson(added);
            } else {
                String tls = added.path("secureChannel").asText("none");
                say("listening for " + subsystem.nqn + " on " + Address.describe(added)
                    + (added.has("state") ? " (" + state(added) + ")" : "")
                    + ("none".equals(tls) ? "" : ", TLS " + tls));
            }
            return 0;
        }
    }

    @Command(name = "remove", description = "Stop listening for a subsystem on an address.")
    static final class Remove extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Mixin
        Address.Listener address;

        @Override
        public Integer call() {
            Address.Endpoint e = address.endpoint();
            api().delete(e.path(path(subsystem.nqn)));
            done("removed listener " + e + " from " + subsystem.nqn, "removed",
                object().put("subsystem", subsystem.nqn).set("listener", e.body(object())));
            return 0;
        }
    }

    @Command(name = "ana-state", description = {"Show the ANA groups of a subsystem through a listener, or set one "
        + "group's state (hosts connected through it get the ANA change event).",
        "States: optimized, non-optimized, inaccessible, persistent-loss, change.",
        "Example: nvmfctl listener ana-state -n nqn.2026-11.io.nvmf4j:default -a 10.0.0.1 -s 4420 --group 1 "
            + "--state non-optimized"})
    static final class AnaState extends ApiCommand {
        @Mixin
        SubsystemNqn subsystem;

        @Mixin
        Address.Listener address;

        @picocli.CommandLine.Option(names = {"-g", "--group"}, paramLabel = "GROUP", defaultValue = "1",
            description = "ANA group id (default: 1).")
        int group;

        @picocli.CommandLine.Option(names = "--state", paramLabel = "STATE",
            description = "Set this state; without it the states are shown.")
        String state;

        @Override
        public Integer call() {
            Address.Endpoint e = address.endpoint();
            String ana = e.path(path(subsystem.nqn)) + "/ana";
            if (state == null) {
                JsonNode groups = api().get(ana);
                if (json()) {
                    printJson(groups);
                } else {
                    Table t = new Table("GROUP", "STATE", "NSIDS");
                    for (JsonNode g : groups) {
                        java.util.List<String> nsids = new java.util.ArrayList<>();
                        g.path("nsids").forEach(n -> nsids.add(n.asText()));
                        t.row(g.get("group"), g.get("state"), nsids.isEmpty() ? "-" : String.join(",", nsids));
                    }
                    t.print(out());
                }
                return 0;
            }
            JsonNode set = api().put(ana + "/" + group, object().put("state", state));
            if (json()) {
                printJson(set);
            } else {
                say("ANA group " + group + " of " + subsystem.nqn + " through " + e + ": " + set.path("state").asText());
            }
            return 0;
        }
    }
}
