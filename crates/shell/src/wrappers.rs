//! The commands that run another command given as their arguments, and how to skip their
//! options to find it.

/// A command that runs another command given as its arguments.
pub(crate) struct Wrapper {
    /// The command name.
    pub(crate) name: &'static str,
    /// Options that take a value as the next word.
    pub(crate) with_value: &'static [&'static str],
    /// Operands before the command (`timeout 10 cmd`).
    pub(crate) operands: usize,
    /// Whether `NAME=value` words may come before the command.
    pub(crate) assignments: bool,
    /// Options whose value is a command line run by a shell (`flock -c 'cmd'`).
    pub(crate) command_options: &'static [&'static str],
}

impl Wrapper {
    /// A wrapper with no options that take a value, no operands, no assignments and no
    /// command options: what most of them are; the methods below say where one differs.
    const fn new(name: &'static str) -> Self {
        Wrapper {
            name,
            with_value: &[],
            operands: 0,
            assignments: false,
            command_options: &[],
        }
    }

    const fn with_value(mut self, options: &'static [&'static str]) -> Self {
        self.with_value = options;
        self
    }

    const fn operands(mut self, count: usize) -> Self {
        self.operands = count;
        self
    }

    const fn assignments(mut self) -> Self {
        self.assignments = true;
        self
    }

    const fn command_options(mut self, options: &'static [&'static str]) -> Self {
        self.command_options = options;
        self
    }
}

/// The wrappers rein looks through.
pub(crate) const WRAPPERS: [Wrapper; 43] = [
    Wrapper::new("sudo")
        .with_value(&[
            "-u",
            "-g",
            "-h",
            "-p",
            "-C",
            "-D",
            "-r",
            "-t",
            "-U",
            "-T",
            "-R",
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--close-from",
            "--chdir",
            "--role",
            "--type",
            "--other-user",
            "--command-timeout",
            "--chroot",
        ])
        .assignments(),
    Wrapper::new("doas").with_value(&["-u", "-C"]),
    Wrapper::new("env")
        .with_value(&["-u", "--unset", "-C", "--chdir"])
        .assignments(),
    Wrapper::new("nohup"),
    Wrapper::new("time").with_value(&["-f", "--format", "-o", "--output"]),
    Wrapper::new("command"),
    Wrapper::new("builtin"),
    Wrapper::new("exec").with_value(&["-a"]),
    Wrapper::new("xargs").with_value(&[
        "-a",
        "--arg-file",
        "-d",
        "--delimiter",
        "-E",
        "-I",
        "-L",
        "-n",
        "--max-args",
        "-P",
        "--max-procs",
        "-s",
        "--max-chars",
        "--process-slot-var",
    ]),
    Wrapper::new("nice").with_value(&["-n", "--adjustment"]),
    Wrapper::new("ionice").with_value(&[
        "-c",
        "--class",
        "-n",
        "--classdata",
        "-p",
        "--pid",
        "-P",
        "--pgid",
        "-u",
        "--uid",
    ]),
    Wrapper::new("timeout")
        .with_value(&["-s", "--signal", "-k", "--kill-after"])
        .operands(1),
    Wrapper::new("stdbuf").with_value(&["-i", "-o", "-e", "--input", "--output", "--error"]),
    Wrapper::new("setsid"),
    Wrapper::new("taskset").operands(1),
    Wrapper::new("unbuffer"),
    Wrapper::new("busybox"),
    Wrapper::new("watch").with_value(&["-n", "--interval", "-q", "--equexit"]),
    Wrapper::new("flock")
        .with_value(&["-w", "--wait", "--timeout", "-E", "--conflict-exit-code"])
        .operands(1)
        .command_options(&["-c", "--command"]),
    Wrapper::new("strace").with_value(&[
        "-e", "-o", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-S", "-X", "-U",
    ]),
    Wrapper::new("ltrace").with_value(&[
        "-e", "-o", "-p", "-s", "-u", "-a", "-n", "-A", "-D", "-F", "-l", "-L",
    ]),
    Wrapper::new("chroot").operands(1),
    Wrapper::new("unshare").with_value(&[
        "-S",
        "--setuid",
        "-G",
        "--setgid",
        "-R",
        "--root",
        "-w",
        "--wd",
        "--propagation",
        "--setgroups",
        "--map-user",
        "--map-group",
        "--map-users",
        "--map-groups",
    ]),
    Wrapper::new("parallel").with_value(&[
        "-j",
        "--jobs",
        "-S",
        "--sshlogin",
        "--sshloginfile",
        "-a",
        "--arg-file",
        "-d",
        "--delimiter",
        "-E",
        "-I",
        "-n",
        "--max-args",
        "-N",
        "-L",
        "-C",
        "--colsep",
        "--joblog",
        "--results",
        "--tmpdir",
        "--workdir",
        "--wd",
        "--timeout",
        "--delay",
        "--retries",
        "--halt",
        "--memfree",
        "--load",
        "--tagstring",
        "-s",
        "--basefile",
        "--env",
    ]),
    Wrapper::new("script")
        .with_value(&[
            "-E",
            "--echo",
            "-I",
            "--log-in",
            "-O",
            "--log-out",
            "-B",
            "--log-io",
            "-T",
            "--log-timing",
            "-m",
            "--logging-format",
            "-o",
            "--output-limit",
        ])
        .command_options(&["-c", "--command"]),
    Wrapper::new("runuser")
        .with_value(&[
            "-u",
            "--user",
            "-g",
            "--group",
            "-G",
            "--supp-group",
            "-s",
            "--shell",
            "-w",
            "--whitelist-environment",
        ])
        .command_options(&["-c", "--command"]),
    Wrapper::new("sg").operands(1).command_options(&["-c"]),
    Wrapper::new("pkexec").with_value(&["--user"]),
    Wrapper::new("nsenter").with_value(&[
        "-t", "--target", "-S", "--setuid", "-G", "--setgid", "-r", "--root", "-w", "--wd",
    ]),
    Wrapper::new("setpriv").with_value(&[
        "--reuid",
        "--regid",
        "--groups",
        "--inh-caps",
        "--ambient-caps",
        "--bounding-set",
        "--securebits",
        "--selinux-label",
        "--apparmor-profile",
        "--landlock-access",
        "--landlock-rule",
    ]),
    Wrapper::new("systemd-run").with_value(&[
        "-u",
        "--unit",
        "-p",
        "--property",
        "-E",
        "--setenv",
        "--uid",
        "--gid",
        "--nice",
        "-D",
        "--working-directory",
        "--slice",
        "--description",
    ]),
    Wrapper::new("firejail"),
    Wrapper::new("fakeroot").with_value(&["-l", "--lib", "--faked", "-s", "-i"]),
    Wrapper::new("faketime")
        .with_value(&["-m", "-p", "-f"])
        .operands(1),
    Wrapper::new("proxychains").with_value(&["-f"]),
    Wrapper::new("proxychains4").with_value(&["-f"]),
    Wrapper::new("torsocks").with_value(&["-u", "-p", "-a", "-P"]),
    Wrapper::new("valgrind"),
    Wrapper::new("numactl").with_value(&[
        "-C",
        "--physcpubind",
        "-N",
        "--cpunodebind",
        "-m",
        "--membind",
        "-i",
        "--interleave",
        "-p",
        "--preferred",
    ]),
    Wrapper::new("prlimit").with_value(&["-p", "--pid"]),
    Wrapper::new("cgexec").with_value(&["-g"]),
    Wrapper::new("xvfb-run").with_value(&[
        "-n",
        "--server-num",
        "-s",
        "--server-args",
        "-e",
        "--error-file",
        "-f",
        "--auth-file",
        "-p",
        "--xauth-protocol",
    ]),
    Wrapper::new("dbus-run-session").with_value(&["--config-file", "--dbus-daemon"]),
];
