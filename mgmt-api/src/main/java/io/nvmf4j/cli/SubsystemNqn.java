package io.nvmf4j.cli;

import picocli.CommandLine.Option;

/** The subsystem a command works on: {@code -n/--nqn}, as nvme-cli spells it. */
final class SubsystemNqn {
    @Option(names = {"-n", "--nqn"}, required = true, paramLabel = "NQN", description = "The subsystem's NQN.")
    String nqn;

    @Override
    public String toString() {
        return nqn;
    }
}
