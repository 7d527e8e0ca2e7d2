package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code nvmfctl transport}: transport options ({@code /api/v1/transports}); stored, applied at the next start. */
@Command(name = "transport", description = "Transport options: get, set (stored; applied at the next start).",
    subcommands = {TransportCommands.Get.class, TransportCommands.Set.class})
final class TransportCommands extends Group {
    static final String PATH = ApiClient.V1 + "/transports";

    @Command(name = "get", description = "Show the options of every transport.")
    static final class Get extends ApiCommand {
        @Override
        public Integer call() {
            JsonNode all = api().get(PATH);
            if (json()) {
                printJson(all);
                return 0;
            }
            ObjectNode flat = object();
            all.fields().forEachRemaining(t -> t.getValue().fields().forEachRemaining(o ->
                flat.set(t.getKey() + "." + o.getKey(), o.getValue())));
            Table.printObject(out(), flat);
            return 0;
        }
    }

    @Command(name = "set", description = {"Change options of a transport; the others keep their value.",
        "Example: nvmfctl transport set tcp --max-queue-depth 256"})
    static final class Set extends ApiCommand {
        @Parameters(paramLabel = "TRANSPORT", description = "tcp (the only transport with options so far).")
        String transport;

        @Option(names = "--in-capsule-data-size", paramLabel = "BYTES")
        Integer inCapsuleDataSize;

        @Option(names = "--max-queue-depth", paramLabel = "N")
        Integer maxQueueDepth;

        @Option(names = "--max-io-queues", paramLabel = "N")
        Integer maxIoQueues;

        @Option(names = "--mdts-bytes", paramLabel = "BYTES")
        Integer mdtsBytes;

        @Option(names = "--max-h2c-data", paramLabel = "BYTES")
        Integer maxH2cData;

        @Option(names = "--c2h-success", paramLabel = "true|false", arity = "1")
        Boolean c2hSuccess;

        @Option(names = "--connect-timeout-ms", paramLabel = "MS", description = "ICReq and Connect limit; 0 = none.")
        Integer connectTimeoutMs;

        @Override
        public Integer call() {
            if (!transport.equals("tcp")) {
                throw CliException.usage("only the tcp transport has options, got '" + transport + "'");
            }
            ObjectNode tcp = (ObjectNode) api().get(PATH).get("tcp").deepCopy();
            put(tcp, "inCapsuleDataSize", inCapsuleDataSize);
            put(tcp, "maxQueueDepth", maxQueueDepth);
            put(tcp, "maxIoQueues", maxIoQueues);
            put(tcp, "mdtsBytes", mdtsBytes);
            put(tcp, "maxH2cData", maxH2cData);
            put(tcp, "connectTimeoutMs", connectTimeoutMs);
            if (c2hSuccess != null) {
                tcp.put("c2hSuccess", c2hSuccess);
            }
            JsonNode answer = api().put(PATH + "/tcp", tcp);
            if (json()) {
                printJson(answer);
                return 0;
            }
            out().println("stored; applies at the next start of the service");
            ObjectNode flat = object();
            answer.get("tcp").fields().forEachRemaining(o -> flat.set("tcp." + o.getKey(), o.getValue()));
            Table.printObject(out(), flat);
            return 0;
        }

        private static void put(ObjectNode node, String field, Integer value) {
            if (value != null) {
                node.put(field, value);
            }
        }
    }
}
