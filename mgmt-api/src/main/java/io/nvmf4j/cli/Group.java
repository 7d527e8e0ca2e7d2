package io.nvmf4j.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** A resource with subcommands (bdev, subsystem, ...): alone it is a usage error (exit 2). */
abstract class Group implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), missing("subcommand", spec));
    }

    /** "missing subcommand: one of list, get, ..." naming the visible subcommands of {@code spec}. */
    static String missing(String what, CommandSpec spec) {
        List<String> names = new ArrayList<>();
        spec.subcommands().forEach((name, sub) -> {
            CommandSpec s = sub.getCommandSpec();
            if (!s.usageMessage().hidden() && s.name().equals(name)) {
                names.add(name);
            }
        });
        return "missing " + what + ": one of " + String.join(", ", names);
    }
}
