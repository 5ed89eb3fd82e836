package CMRXBench::Starman;

# A Starman server of bench/app.pl on a free loopback port: started with
# --preload-app and N workers, stopped (with its workers) by stop, when the
# object goes away, or at exit (CMRXDev::ChildProcess); its workers' memory
# read from /proc; and the load generator wrk, run against it.

use strict;
use warnings;
use parent 'CMRXDev::ChildProcess';    # registry, stop, DESTROY, END

use File::Spec ();
use HTTP::Tiny ();
use IO::Socket::INET ();
use POSIX qw(WNOHANG);
use Time::HiRes qw(sleep time);

my $HOST          = '127.0.0.1';    # loopback only
my $START_TIMEOUT = 60;             # seconds for the app to load and answer /ping
my $ATTEMPTS      = 5;              # ports to try
my $MAX_REQUESTS  = 1_000_000_000;  # Starman restarts a worker after 1000 by default

# The path of a program in PATH, or undef.
sub which {
    my ($name) = @_;
    for my $dir (grep { length } File::Spec->path) {
        my $file = File::Spec->catfile($dir, $name);
        return $file if -f $file && -x _;
    }
    return undef;
}

# start(psgi => FILE, workers => N, log => FILE, inc => [dirs]): the server,
# once its app answers. Keep-alive is off: with more connections than
# workers, a kept-alive connection holds its worker and the others wait.
sub start {
    my ($class, %o) = @_;
    my $starman = which('starman') or die "starman not found in PATH\n";
    my $last = '';
    for (1 .. $ATTEMPTS) {
        my $port = _free_port();
        my @cmd = ($^X, (map { "-I$_" } @{ $o{inc} || [] }), $starman, '--preload-app',
                   '--workers', $o{workers}, '--listen', "$HOST:$port", '--max-requests', $MAX_REQUESTS,
                   '--disable-keepalive', $o{psgi});
        my $pid = _spawn(\@cmd, $o{log});
        $class->_track($pid);
        my $self = bless { host => $HOST, port => $port, pid => $pid, owner => $$, log => $o{log} }, $class;
        my $state = $self->_wait_until_up;
        return $self if $state eq 'up';
        if ($state eq 'exited') { $class->_untrack($pid) } else { $self->stop }
        $last = _tail($o{log});
        last unless $last =~ /bind|in use/i;    # only a port clash is worth another try
    }
    die "starman did not come up; its log says:\n$last\n";
}

sub url { my ($self, $path) = @_; return "http://$self->{host}:$self->{port}" . ($path // '/') }

# The pids of the master's children (its workers).
sub workers {
    my ($self) = @_;
    return () unless $self->{pid};
    my @kids;
    opendir my $dh, '/proc' or return ();
    for my $pid (grep { /\A\d+\z/ } readdir $dh) {
        open my $fh, '<', "/proc/$pid/stat" or next;
        my $stat = <$fh> // next;
        push @kids, $pid if $stat =~ /\) \S+ (\d+) / && $1 == $self->{pid};
    }
    return sort { $a <=> $b } @kids;
}

# { rss, pss, private_dirty, ... } of a process, in KiB, from
# /proc/PID/smaps_rollup (or its smaps summed, on kernels before 4.14).
sub memory_of {
    my ($class, $pid) = @_;
    my %kib;
    for my $file ("/proc/$pid/smaps_rollup", "/proc/$pid/smaps") {
        open my $fh, '<', $file or next;
        while (my $line = <$fh>) {
            $kib{ lc $1 } += $2 if $line =~ /^(Rss|Pss|Private_Dirty|Private_Clean|Shared_Dirty|Shared_Clean|Swap):\s+(\d+) kB/;
        }
        last;
    }
    return \%kib;
}

# The CPU time (user and system) a process has used, in seconds.
my $CLOCK_TICKS = POSIX::sysconf(POSIX::_SC_CLK_TCK()) || 100;
sub cpu_seconds_of {
    my ($class, $pid) = @_;
    open my $fh, '<', "/proc/$pid/stat" or return 0;
    my $stat = <$fh> // return 0;
    my @f = split ' ', substr($stat, rindex($stat, ')') + 2);
    return ($f[11] + $f[12]) / $CLOCK_TICKS;    # utime, stime: fields 14 and 15 of stat
}

# Stops the master, which stops its workers; any worker left is stopped too.
sub stop {
    my ($self) = @_;
    my @workers = $self->{pid} && $self->{owner} == $$ ? $self->workers : ();
    $self->SUPER::stop;
    my $deadline = time + 2;
    while (@workers && time < $deadline) { @workers = grep { kill 0, $_ } @workers; sleep 0.05 if @workers }
    kill 'KILL', @workers if @workers;
    return;
}

# Stops servers (Starman's and memcached's, any CMRXDev::ChildProcess) all
# at once: each takes a second or two to act on TERM.
sub stop_together {
    my ($class, @children) = @_;
    my @workers = map { $_->isa(__PACKAGE__) && $_->{pid} && $_->{owner} == $$ ? $_->workers : () } @children;
    my @pids = map { $_->{pid} && $_->{owner} == $$ ? delete $_->{pid} : () } @children;
    $class->_kill_and_reap(@pids);
    my $deadline = time + 2;
    while (@workers && time < $deadline) { @workers = grep { kill 0, $_ } @workers; sleep 0.05 if @workers }
    kill 'KILL', @workers if @workers;
    return;
}

sub get {
    my ($self, $path) = @_;
    return HTTP::Tiny->new(timeout => 600)->get($self->url($path));
}

sub _wait_until_up {
    my ($self) = @_;
    my $deadline = time + $START_TIMEOUT;
    my $http = HTTP::Tiny->new(timeout => 5);
    while (time < $deadline) {
        return 'exited' if waitpid($self->{pid}, WNOHANG) == $self->{pid};
        return 'up' if $http->get($self->url('/ping'))->{status} == 200;
        sleep 0.1;
    }
    return 'failed';
}

sub _free_port {
    my $sock = IO::Socket::INET->new(LocalAddr => $HOST, LocalPort => 0, Proto => 'tcp', Listen => 1)
        or die "cannot bind a socket on $HOST: $@\n";
    my $port = $sock->sockport;
    close $sock;
    return $port;
}

sub _spawn {
    my ($cmd, $log) = @_;
    my $pid = fork // die "fork: $!\n";
    return $pid if $pid;
    open STDIN, '<', File::Spec->devnull;
    open STDOUT, '>>', $log;
    open STDERR, '>&', \*STDOUT;
    { exec { $cmd->[0] } @$cmd }
    print STDERR "exec $cmd->[0] failed: $!\n";
    POSIX::_exit(127);
}

sub _tail {
    my ($file) = @_;
    open my $fh, '<', $file or return '(no log)';
    my @lines = <$fh>;
    return join '', @lines > 20 ? @lines[-20 .. -1] : @lines;
}

# ---- wrk ----------------------------------------------------------------------

# The wrk running now, for an interrupted run to stop it at once.
our $WRK_PID;

# Runs wrk against $url (threads, connections, seconds) and returns
# { rps, requests, p50, p75, p90, p99 (seconds), non2xx, socket_errors, output }.
sub wrk {
    my ($class, %o) = @_;
    my $wrk = which('wrk') or die "wrk not found in PATH\n";
    my @cmd = ($wrk, "-t$o{threads}", "-c$o{connections}", "-d$o{seconds}s", '--latency', '--timeout', '10s', $o{url});
    local $WRK_PID = open my $fh, '-|', @cmd or die "wrk: $!\n";
    my $out = do { local $/; <$fh> };
    close $fh;
    die "wrk failed (exit status $?):\n$out" if $?;
    my %r = (output => $out, non2xx => 0, socket_errors => 0);
    my %unit = (us => 1e-6, ms => 1e-3, s => 1, m => 60);
    while ($out =~ /^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s|m)\s*$/mg) { $r{"p$1"} = $2 * $unit{$3} }
    ($r{requests}) = $out =~ /^\s*(\d+) requests in /m;
    ($r{rps}) = $out =~ /^Requests\/sec:\s+([\d.]+)/m;
    $r{non2xx} = $1 if $out =~ /Non-2xx or 3xx responses: (\d+)/;
    if ($out =~ /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/) { $r{socket_errors} = $1 + $2 + $3 + $4 }
    defined $r{$_} or die "wrk: no $_ in its output:\n$out" for qw(rps requests p50 p99);
    return \%r;
}

1;
