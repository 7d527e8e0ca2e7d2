package io.nvmf4j.cli;

import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Runs nvmfctl in-process with captured stdout and stderr. */
final class Cli {
    private final List<String> globals;
    private final Map<String, String> env;

    /** @param globals options put before every command line (--url, --state-dir, ...) */
    Cli(Map<String, String> env, String... globals) {
        this.env = env;
        this.globals = List.of(globals);
    }

    /** One run: exit code, stdout, stderr. */
    record Run(int code, String out, String err) {
        @Override
        public String toString() {
            return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    Run run(String... args) {
        List<String> all = new ArrayList<>(globals);
        all.addAll(Arrays.asList(args));
        return runBare(env, all.toArray(String[]::new));
    }

    static Run runBare(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = Nvmfctl.commandLine(env);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }
}
