package io.nvmf4j.service.profile;

import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.TargetConfig;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/** The profile commands of {@code nvmf4j-target}: {@code check} and {@code setup}. */
public final class ProfileCommands {
    private ProfileCommands() {
    }

    /** The options both commands take. */
    static final class ProfileOptions {
        @Option(names = "--profile", required = true, paramLabel = "NAME",
            description = "The profile: bluefield2 (8 x Cortex-A72, 16 GiB) or bluefield3 (16 x Cortex-A78, 32 GiB).")
        String name;

        @Option(names = "--scale-down", description = "Fit the profile's CPU and memory numbers to this machine "
            + "(poll groups on the CPUs there are beyond the OS's, buffers and hugepages by its share of the card's "
            + "memory): to run a profile on a test machine or a small Arm guest.")
        boolean scaleDown;

        @Option(names = "--root", paramLabel = "DIR", defaultValue = "/", description = "Read /proc and /sys (and "
            + "for setup write /etc, /var) under DIR instead of / (an image, a test tree). Default: /.")
        Path root;

        /** How the engines are asked about; null: {@link EngineProbe#of} the machine under {@link #root}. */
        EngineProbe probe;

        Profile profile() {
            return Profile.load(name);
        }

        /** The engine the target runs here ({@link EngineChoice}), set into {@code c}: its hugepages follow it. */
        EngineChoice engine(Profile p, TargetConfig c) {
            MachineFacts m = new MachineFacts(root);
            EngineChoice e = EngineChoice.choose(p, m, probe != null ? probe : EngineProbe.of(m));
            c.engine = e.engine();
            return e;
        }

        Sizing sizing(Profile p, TargetConfig c) {
            if (!scaleDown) {
                return Sizing.asShipped(p, c);
            }
            MachineFacts m = new MachineFacts(root);
            return Sizing.scaledDown(p, c, m.onlineCpus(), m.meminfo("MemTotal"));
        }
    }

    @Command(name = "check", mixinStandardHelpOptions = true, version = "nvmf4j 0.1.0",
        description = {"Check this machine against a DPU profile: architecture and CPUs, memory, hugepages, MEMLOCK, "
            + "rdma-core, kernel modules, RDMA devices (mlx5) and their ports.",
            "Prints one line per check and, for each failure, the command that fixes it; then the engine that will "
            + "run and why: the one the configuration names, else the profile's default (spdk on the BlueField "
            + "profiles) where it can run here, else java."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:every check passed", "1:a check failed, or the engine the configuration names cannot run "
            + "here", "2:bad usage (an unknown profile)"})
    public static final class Check implements Callable<Integer> {
        @CommandLine.Mixin
        ProfileOptions opts = new ProfileOptions();

        @Option(names = "--simulate", description = "Accept soft-RoCE (rxe) devices for the card's ConnectX ports and "
            + "skip the Arm core model (an emulated DPU).")
        boolean simulate;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            Profile p;
            try {
                p = opts.profile();
            } catch (IllegalArgumentException e) {
                spec.commandLine().getErr().println("nvmf4j-target check: " + e.getMessage());
                return 2;
            }
            TargetConfig preset = p.preset();
            EngineChoice engine = opts.engine(p, preset);
            Sizing s = opts.sizing(p, preset);
            MachineFacts m = new MachineFacts(opts.root);
            out.println("profile " + p.machine.name + " (" + p.machine.model + ")" + (simulate ? ", simulated" : "")
                + (s.scaledDown ? String.format(Locale.ROOT, ", scaled down: %d poll group(s) on CPUs %s, memory x %.3f",
                s.config.cores, Profile.cpuList(s.config), s.memoryFactor) : "")
                + (opts.root.toString().equals("/") ? "" : ", machine under " + opts.root));
            List<MachineCheck.Result> results = MachineCheck.run(p, m, s, simulate);
            int failed = 0;
            for (MachineCheck.Result r : results) {
                out.println(r.line());
                if (!r.ok()) {
                    failed++;
                    out.println("      fix: " + r.fix());
                }
            }
            out.println(engine.line());
            if (!engine.runs()) {
                out.println("      fix: " + engine.fix());
            }
            out.println((failed == 0 ? "all " + results.size() + " checks passed"
                : failed + " of " + results.size() + " checks failed")
                + (engine.runs() ? "" : "; the configured engine cannot run here"));
            out.flush();
            return failed == 0 && engine.runs() ? 0 : 1;
        }
    }

    @Command(name = "setup", mixinStandardHelpOptions = true, version = "nvmf4j 0.1.0",
        description = {"Prepare this machine for a DPU profile: reserve the hugepages (now and in /etc/sysctl.d), "
            + "check rdma-core and the RDMA devices, install the configuration (kept where one exists) with the engine "
            + "check reports, the API's TLS certificate, the JVM options (/etc/default/nvmf4j) and the unit's drop-in "
            + "(CPUAffinity or the spdk engine's hugetlbfs, ordering).",
            "Then: systemctl daemon-reload && systemctl enable --now nvmf4j"},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:done (warnings printed for missing RDMA parts)", "1:a file could not be written",
            "2:bad usage or a configuration the validator refuses (every bad field is named)"})
    public static final class Setup implements Callable<Integer> {
        @CommandLine.Mixin
        ProfileOptions opts = new ProfileOptions();

        @Option(names = "--uplink", required = true, paramLabel = "ADDR", description = "Address of an uplink port "
            + "to serve NVMe/RDMA on (repeat for each port).")
        List<String> uplinks;

        @Option(names = "--mgmt-address", paramLabel = "ADDR", defaultValue = "127.0.0.1", description = "Address "
            + "the management API (TLS, bearer token) binds to: the DPU's out-of-band port. Default: 127.0.0.1.")
        String mgmtAddress;

        @Option(names = "--dry-run", description = "Print every step and file without changing anything.")
        boolean dryRun;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            try {
                Profile p = opts.profile();
                TargetConfig c = p.config(uplinks, mgmtAddress);
                EngineChoice engine = opts.engine(p, c);
                Sizing s = opts.sizing(p, c);
                ConfigValidator.validate(s.config);
                out.println("profile " + p.machine.name + " (" + p.machine.model + "): " + s.config.cores
                    + " poll group(s) on CPUs " + Profile.cpuList(s.config) + ", " + s.hugepages + " hugepages"
                    + (s.scaledDown ? " (scaled down)" : ""));
                out.println(engine.line());
                if (!engine.runs()) {
                    out.println("warning: the configured engine cannot run here: " + engine.fix());
                }
                MachineFacts m = new MachineFacts(opts.root);
                for (MachineCheck.Result r : MachineCheck.run(p, m, s, true)) {
                    if (!r.ok() && (r.name().startsWith("rdma") || r.name().equals("kernel modules"))) {
                        out.println("warning: " + r.name() + ": " + r.found() + " (RDMA listeners report failed "
                            + "until this is fixed: " + r.fix() + ")");
                    }
                }
                new ProfileSetup(p, s, opts.root, dryRun, out).run();
                out.flush();
                return 0;
            } catch (IllegalArgumentException e) {
                err.println("nvmf4j-target setup: " + e.getMessage());
            } catch (ConfigException e) {
                e.problems().forEach(x -> err.println("nvmf4j-target setup: " + x));
            } catch (IOException e) {
                err.println("nvmf4j-target setup: " + e.getMessage());
                err.flush();
                return 1;
            }
            err.flush();
            return 2;
        }
    }
}
