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

        Profile profile() {
            return Profile.load(name);
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
            "Prints one line per check and, for each failure, the command that fixes it."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:every check passed", "1:a check failed", "2:bad usage (an unknown profile)"})
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
            Sizing s = opts.sizing(p, p.preset());
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
            out.println(failed == 0 ? "all " + results.size() + " checks passed"
                : failed + " of " + results.size() + " checks failed");
            out.flush();
            return failed == 0 ? 0 : 1;
        }
    }

    @Command(name = "setup", mixinStandardHelpOptions = true, version = "nvmf4j 0.1.0",
        description = {"Prepare this machine for a DPU profile: reserve the hugepages (now and in /etc/sysctl.d), "
            + "check rdma-core and the RDMA devices, install the configuration (kept where one exists), the API's TLS "
            + "certificate, the JVM options (/etc/default/nvmf4j) and the unit's drop-in (CPUAffinity, ordering).",
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
                Sizing s = opts.sizing(p, p.config(uplinks, mgmtAddress));
                ConfigValidator.validate(s.config);
                out.println("profile " + p.machine.name + " (" + p.machine.model + "): " + s.config.cores
                    + " poll group(s) on CPUs " + Profile.cpuList(s.config) + ", " + s.hugepages + " hugepages"
                    + (s.scaledDown ? " (scaled down)" : ""));
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
