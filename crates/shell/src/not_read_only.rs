//! Why a command is not provably read-only. Each variant's text is the one sentence a person
//! and a model read (after "commands that change things need approval"), so it says what
//! the command does that rein cannot vouch for.

/// Why a command (or a whole command line) is not provably read-only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotReadOnly {
    /// It runs after a `cd` to a directory the text does not tell: which files its relative
    /// paths name is not known.
    #[error(
        "it runs after a `cd` to a directory rein cannot tell, so rein cannot tell which files \
         it reads"
    )]
    UnknownDirectory,
    /// A redirection writes to a file.
    #[error(
        "`{redirect}` writes to a file; rein only proves commands read-only when their output \
         goes to the terminal or /dev/null"
    )]
    WritesFile {
        /// The redirection as written (`> out.txt`).
        redirect: String,
    },
    /// A redirection opens a file for reading and writing (`<>`).
    #[error("`{redirect}` opens a file for writing")]
    OpensForWriting {
        /// The redirection as written.
        redirect: String,
    },
    /// A shell variable is assigned (`X=1`), which later commands may depend on.
    #[error("`{assignment}` assigns a shell variable, which can change what later commands run")]
    AssignsVariable {
        /// The assignment as written.
        assignment: String,
    },
    /// An assignment before the command changes its environment (`PATH=. ls`).
    #[error("`{assignment}` changes the environment of `{command}`, which can change what it runs")]
    ChangesEnvironment {
        /// The assignment as written.
        assignment: String,
        /// The command name as written.
        command: String,
    },
    /// `env NAME=...` sets a variable that can change what a program runs.
    #[error("setting {name} in the environment can change what a program runs")]
    SetsEnvironment {
        /// The variable.
        name: String,
    },
    /// The command name is a variable, a glob or a substitution.
    #[error("the command name `{name}` is known only when it runs")]
    NameAtRunTime {
        /// The name as written.
        name: String,
    },
    /// A word holding a whole command line is run (`env -S '...'`).
    #[error("`{command}` runs `{line}` as a command line")]
    RunsCommandLine {
        /// The command name as written.
        command: String,
        /// The command line it runs, as written.
        line: String,
    },
    /// The program is reached in a way not treated as read-only (after options of a
    /// non-wrapper, `exec -a`...).
    #[error("`{command}` {program} runs in a way rein does not treat as read-only")]
    RunsOtherwise {
        /// The command name as written.
        command: String,
        /// The program that runs.
        program: String,
    },
    /// A wrapper that is not transparent (`sudo`, `nohup`, `xargs`, `watch`...).
    #[error("`{wrapper}` runs another command in a way rein does not treat as read-only")]
    Wrapper {
        /// The wrapper's name.
        wrapper: String,
    },
    /// A wrapper's option is known only when it runs.
    #[error("`{wrapper} {option}` has an option known only when it runs")]
    WrapperOptionAtRunTime {
        /// The wrapper's name.
        wrapper: String,
        /// The option as written.
        option: String,
    },
    /// `time -o FILE` writes its report to a file.
    #[error("`time {option}` writes its report to a file")]
    TimeWritesReport {
        /// The option as written.
        option: String,
    },
    /// A program named by a path outside the system's binary directories (`./ls`).
    #[error("`{path}` runs a program by its path, which rein cannot vouch for")]
    ProgramByPath {
        /// The path as written.
        path: String,
    },
    /// A wrapper or lookup command whose arguments run nothing known.
    #[error("`{name}` with these arguments runs no known command")]
    RunsNoKnownCommand {
        /// The command name.
        name: String,
    },
    /// The program is not known to be read-only, or one of its options or operands writes a
    /// file or runs another program (the text says which).
    #[error("{0}")]
    Program(String),
    /// `(( ))` evaluates arithmetic, which can assign variables.
    #[error("`(( ))` evaluates arithmetic, which can assign variables")]
    ArithmeticCommand,
    /// The line runs something in the background (`&`).
    #[error(
        "it runs a command in the background (`&`), which keeps running after the call; run it \
         in the foreground"
    )]
    Background,
    /// The line defines a function.
    #[error("it defines a function (`{name}`), which changes what that name runs")]
    DefinesFunction {
        /// The function's name.
        name: String,
    },
    /// The line evaluates arithmetic (`(( ))`, `$(( ))`).
    #[error("it evaluates arithmetic (`(( ))`, `$(( ))`), which can assign variables")]
    Arithmetic,
    /// A command substitution runs inside the command.
    #[error("it runs `$({command})` inside the command; write the commands out separately")]
    CommandSubstitution {
        /// The substituted command line, trimmed.
        command: String,
    },
    /// A process substitution runs commands.
    #[error("it uses process substitution (`<( )`, `>( )`), which runs commands")]
    ProcessSubstitution,
    /// `${X:=...}` assigns a variable.
    #[error("`${{{name}:=...}}` assigns a variable")]
    AssignsInExpansion {
        /// The variable.
        name: String,
    },
    /// A word the analyzer cannot read.
    #[error("rein cannot read the word `{word}`")]
    UnreadableWord {
        /// The word as written.
        word: String,
    },
    /// The line (or a line nested in it) does not parse.
    #[error("rein cannot parse it ({error}), so it cannot prove it harmless")]
    Unparsed {
        /// What the parser said.
        error: String,
    },
    /// Nothing runs.
    #[error("there is no command to run")]
    NoCommand,
    /// Nested too deeply, or too large, to check.
    #[error("it is too deeply nested or too large for rein to check")]
    TooComplex,
}
