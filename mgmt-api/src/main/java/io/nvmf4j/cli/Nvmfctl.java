package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.service.StateDir;
import io.nvmf4j.service.api.ApiToken;
import picocli.CommandLine;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code nvmfctl}: the command line over the management REST API (docs/rest-api.md). Every command has
 * {@code -h/--help} ({@code scope = INHERIT}) and {@code nvmfctl help CMD [SUB]}; the global options are
 * inherited, so they may stand before or after the subcommand. Exit codes: 0 done, 1 the API refused (4xx),
 * 2 bad usage, 3 cannot connect or the service failed (5xx). Errors are one line on stderr, never a stack
 * trace; a usage error adds one "Try '... --help'" line instead of the whole usage. With {@code --json}
 * every output is JSON: the result on stdout, warnings and the error as one JSON object per line on stderr.
 */
@Command(name = "nvmfctl", scope = ScopeType.INHERIT, mixinStandardHelpOptions = true, version = "nvmfctl 0.1.0",
    description = {"Manage a running nvmf4j target through its REST API.",
        "Start with 'nvmfctl ls' (the whole target as a tree); 'nvmfctl help COMMAND [SUBCOMMAND]' or "
            + "'nvmfctl COMMAND --help' explains each command."},
    subcommands = {LsCommand.class, BdevCommands.class, PoolCommands.Pools.class, PoolCommands.Volumes.class,
        PoolCommands.Snapshots.class, SubsystemCommands.class, NamespaceCommands.class, QosCommands.class,
        HostCommands.class, ListenerCommands.class, ControllerCommands.class, IoCommands.class, ReferralCommands.class,
        TransportCommands.class, ConfigCommands.class, NvmetcliImport.Current.class, NvmetcliImport.Legacy.class,
        HealthCommand.class, HelpCommand.class},
    footerHeading = "%nJSON output:%n",
    footer = {"With --json a command prints its result as JSON on stdout (a delete or remove: {\"deleted\": ...} or "
        + "{\"removed\": ...}); warnings are {\"warning\": \"...\"} lines on stderr and an error is one line "
        + "{\"error\": {\"exitCode\": N, \"status\": HTTP-STATUS, \"message\": \"...\", \"field\": \"...\"}} on stderr "
        + "(status and field when the API gave them); the exit codes stay the same."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:done", "1:the API refused the request (4xx: its message is printed)",
        "2:bad usage", "3:cannot connect to the service, or it failed (5xx)"})
public final class Nvmfctl implements Callable<Integer> {
    static final String TOKEN_ENV = "NVMF4J_TOKEN";
    static final String DEFAULT_URL = "http://127.0.0.1:8420";

    // no picocli defaultValue: an inherited option's default, applied while a subcommand is parsed, would
    // overwrite a value given before the subcommand
    @Option(names = "--url", scope = ScopeType.INHERIT, paramLabel = "URL",
        description = "API base URL (default: " + DEFAULT_URL + ").")
    String url;

    @Option(names = "--token", scope = ScopeType.INHERIT, paramLabel = "TOKEN",
        description = "Bearer token (visible to other users in the process list; prefer NVMF4J_TOKEN or --token-file).")
    String token;

    @Option(names = "--token-file", scope = ScopeType.INHERIT, paramLabel = "FILE",
        description = "File holding the bearer token.")
    Path tokenFile;

    @Option(names = "--state-dir", scope = ScopeType.INHERIT, paramLabel = "DIR",
        description = "The service's state directory; the token is read from DIR/api-token when not given otherwise "
            + "(default: /var/lib/nvmf4j for root, ~/.local/state/nvmf4j otherwise).")
    Path stateDir;

    @Option(names = "--json", scope = ScopeType.INHERIT, description = "JSON output: the API's objects instead of tables, and errors as JSON on stderr.")
    boolean json;

    @Option(names = "--cacert", scope = ScopeType.INHERIT, paramLabel = "FILE",
        description = "Trust the PEM certificates in FILE for HTTPS (the service's own self-signed certificate, or "
            + "the CA that signed it), with the host name still checked.")
    Path cacert;

    @Option(names = "--insecure", scope = ScopeType.INHERIT,
        description = "HTTPS without verifying the certificate or host name (self-signed test setups only: "
            + "anyone on the path can read the token).")
    boolean insecure;

    @Spec
    CommandSpec spec;

    private final Map<String, String> env;
    private final ObjectMapper mapper = ConfigStore.mapper();
    private ApiClient client;

    /** @param env the environment ({@code NVMF4J_TOKEN}); tests pass their own */
    public Nvmfctl(Map<String, String> env) {
        this.env = env;
    }

    public static void main(String[] args) {
        System.exit(commandLine(System.getenv()).execute(args));
    }

    /**
     * The command line with nvmfctl's error handling: a usage error is one line and a "Try" line (exit 2),
     * any other failure one line with its exit code; with {@code --json} each is a JSON object instead.
     */
    public static CommandLine commandLine(Map<String, String> env) {
        CommandLine cl = new CommandLine(new Nvmfctl(env));
        GlobalOptionsHelp.install(cl);
        cl.setParameterExceptionHandler(Nvmfctl::usageError);
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
            boolean json = ((Nvmfctl) cmd.getCommandSpec().root().userObject()).json;
            CliException c = e instanceof CliException ce ? ce
                : new CliException(CliException.UNAVAILABLE, "unexpected error: " + e);
            return report(cmd.getErr(), json, c, null);
        });
        return cl;
    }

    /** A bad command line: picocli's message (with its "Did you mean" suggestions) and where to read more. */
    private static int usageError(ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        // the parse may have failed before --json was read
        boolean json = Arrays.asList(args).contains("--json");
        String help = cmd.getCommandSpec().qualifiedName() + " --help";
        String message = e.getMessage();
        if (e instanceof UnmatchedArgumentException u && !u.getSuggestions().isEmpty()) {
            message += " (did you mean: " + String.join(", ", u.getSuggestions()) + "?)";
        }
        if (message.startsWith("Missing required option") && (message.contains("--nqn=") || message.contains("--hostnqn="))
            && Arrays.stream(args).anyMatch(a -> a.startsWith("nqn."))) {
            // the NQN given the old way, as a positional parameter
            message += " (NQNs are options: -n NQN for the subsystem, -q HOSTNQN for a host)";
        }
        return report(cmd.getErr(), json, CliException.usage(message), help);
    }

    /** Prints a failure on stderr, as text or as one JSON object; answers its exit code. */
    static int report(PrintWriter err, boolean json, CliException c, String help) {
        if (json) {
            ObjectNode error = ConfigStore.mapper().createObjectNode();
            error.putObject("error").put("exitCode", c.exitCode());
            ObjectNode o = (ObjectNode) error.get("error");
            if (c.status() != 0) {
                o.put("status", c.status());
            }
            o.put("message", c.getMessage());
            if (c.field() != null) {
                o.put("field", c.field());
            }
            if (help != null) {
                o.put("help", help);
            }
            err.println(error.toString());
        } else {
            err.println("nvmfctl: " + c.getMessage());
            if (help != null) {
                err.println("Try '" + help + "' for more information.");
            }
        }
        err.flush();
        return c.exitCode();
    }

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), Group.missing("command", spec));
    }

    ObjectMapper mapper() {
        return mapper;
    }

    /** The API client, built on first use from the global options. */
    ApiClient api() {
        if (client == null) {
            String base = url != null ? url : DEFAULT_URL;
            if (!base.startsWith("http://") && !base.startsWith("https://")) {
                throw CliException.usage("--url must start with http:// or https://, got " + base);
            }
            String[] found = resolveToken();
            if (insecure && cacert != null) {
                throw CliException.usage("--insecure and --cacert exclude each other");
            }
            SSLContext tls = insecure ? ApiClient.trustAll() : cacert != null ? ApiClient.trusting(cacert) : null;
            client = new ApiClient(mapper, base, found[0], found[1], tls);
        }
        return client;
    }

    /**
     * The token and where it came from: --token, then NVMF4J_TOKEN, then --token-file, then
     * {@code <state-dir>/api-token}. No token at all is not an error here: health needs none, and the API
     * answers 401 for the rest (the description then says where nvmfctl looked).
     */
    private String[] resolveToken() {
        if (token != null && !token.isBlank()) {
            return new String[] {token.trim(), "token from --token"};
        }
        String fromEnv = env.get(TOKEN_ENV);
        if (fromEnv != null && !fromEnv.isBlank()) {
            return new String[] {fromEnv.trim(), "token from " + TOKEN_ENV};
        }
        if (tokenFile != null) {
            try {
                return new String[] {read(tokenFile), "token from " + tokenFile};
            } catch (IOException e) {
                throw CliException.usage("cannot read --token-file " + tokenFile + ": " + describe(e));
            }
        }
        Path file = (stateDir != null ? stateDir : StateDir.defaultDir()).resolve(ApiToken.FILE_NAME);
        try {
            return new String[] {read(file), "token from " + file};
        } catch (IOException e) {
            return new String[] {null, "no token: give --token, " + TOKEN_ENV + " or --token-file, or --state-dir "
                + "of the service (cannot read " + file + ": " + describe(e) + ")"};
        }
    }

    private static String read(Path file) throws IOException {
        String t = Files.readString(file, StandardCharsets.US_ASCII).trim();
        if (t.isEmpty()) {
            throw new IOException("empty");
        }
        return t;
    }

    private static String describe(IOException e) {
        if (e instanceof NoSuchFileException) {
            return "no such file";
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        return e.getMessage();
    }
}
