package io.nvmf4j.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Help.Ansi;
import picocli.CommandLine.Help.ColorScheme;
import picocli.CommandLine.IHelpCommandInitializable2;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code nvmfctl help [COMMAND [SUBCOMMAND...]]}: the usage of any command at any depth (picocli's own
 * {@link CommandLine.HelpCommand} looks one level down only, so {@code help listener add} would show
 * {@code listener}'s).
 */
@Command(name = "help", helpCommand = true,
    description = "Show the help of a command: 'nvmfctl help listener add' is 'nvmfctl listener add --help'.")
final class HelpCommand implements IHelpCommandInitializable2, Runnable {
    @Parameters(paramLabel = "COMMAND", arity = "0..*", description = "The command and subcommands to explain.")
    List<String> commands = new ArrayList<>();

    private CommandLine self;
    private ColorScheme colors;
    private PrintWriter out;

    @Override
    public void init(CommandLine helpCommandLine, ColorScheme colorScheme, PrintWriter outWriter, PrintWriter errWriter) {
        this.self = helpCommandLine;
        this.colors = colorScheme;
        this.out = outWriter;
    }

    @Override
    public void run() {
        CommandLine target = self.getParent();
        for (String name : commands) {
            CommandLine sub = target.getSubcommands().get(name);
            if (sub == null) {
                throw new ParameterException(self, "unknown command '" + String.join(" ", commands) + "': "
                    + Group.missing("command", target.getCommandSpec()).replace("missing command: ", "expected "));
            }
            target = sub;
        }
        target.usage(out, colors == null ? CommandLine.Help.defaultColorScheme(Ansi.AUTO) : colors);
        out.flush();
    }
}
