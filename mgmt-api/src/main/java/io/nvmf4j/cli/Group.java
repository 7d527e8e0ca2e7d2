package io.nvmf4j.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

/** A resource with subcommands (bdev, subsystem, ...): alone it is a usage error (exit 2). */
abstract class Group implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "missing subcommand: one of "
            + String.join(", ", spec.subcommands().keySet()));
    }
}
