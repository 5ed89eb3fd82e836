package CMRXTest::FaultProxy;

# Test helper: a loopback TCP proxy in front of a memcached that cuts
# connections in the middle of replies and splits every write into small,
# delayed pieces. See the POD at the end of the file.

use strict;
use warnings;

use CMRXTest::DevLib;                   # dev/lib, where CMRXDev::ChildProcess lives
use parent 'CMRXDev::ChildProcess';    # registry, stop, DESTROY, END

use Carp        qw(croak);
use Errno       qw(EAGAIN EINTR EWOULDBLOCK);
use IO::Select  ();
use IO::Socket::INET ();
use POSIX       ();
use Socket      qw(AF_UNIX SOCK_STREAM PF_UNSPEC IPPROTO_TCP TCP_NODELAY
                   SOL_SOCKET SO_LINGER);
use Time::HiRes qw(time);

our $VERSION = '0.01';

my $HOST = '127.0.0.1';    # loopback only

# What a connection is given when it is accepted, and again after each
# reply that ended uncut, with weights (per mille): where it is cut next.
my @PLANS = (
    [none       => 600],    # pass through, split and delayed only
    [value_line => 100],    # inside a VALUE line (its "\r\n" included)
    [data       => 130],    # inside a data block (its "\r\n" included)
    [before_end => 100],    # just before the END of a reply
    [offset     => 35],     # at a random later byte of the reply stream
    [request    => 34],     # at a random later byte of the request stream
    [stall      => 1],      # inside a data block, after a silence
);
my $PLAN_WEIGHT = 0;
$PLAN_WEIGHT += $_->[1] for @PLANS;

my $CUT_CHANCE     = 0.5;       # of a planned cut, at each place that fits
my $BARE_END_CHANCE = 0.2;      # before_end on a reply without values
my $OFFSET_RANGE   = 600_000;   # offsets of offset/request cuts: log-spread
my $PIECE_MAX      = 65_536;    # bytes per write: log-spread from 1
my $DELAY_CHANCE   = 0.3;       # of a pause after a piece
my $DELAY_MAX      = 0.002;     # seconds
my $STALL          = 1.5;       # seconds of silence before a stall's cut
my $RESET_CHANCE   = 0.3;       # a cut closes with RST instead of FIN
my $BUFFER_MAX     = 262_144;   # bytes held per direction before reading stops
my $TICK           = 0.25;      # longest select wait (orphan check)
my $ASK_TIMEOUT    = 10;        # seconds for the proxy to answer the parent

# What the counts are called, in the order they are reported.
my @COUNTS = qw(conns refused cut_value_line cut_data cut_before_end
                cut_offset cut_request cut_stall backend_lost);

# --------------------------------------------------------------------------
# Parent side

sub start {
    my ($class, %opt) = @_;
    my @lanes = @{ $opt{lanes} || ['default'] };
    croak "lane names are words: @lanes" if grep { !/\A[\w.-]+\z/ } @lanes;
    # Listen before forking: the ports are ready as soon as start returns.
    my %listen;
    for my $lane (@lanes) {
        $listen{$lane} = IO::Socket::INET->new(
            LocalAddr => $HOST, LocalPort => 0, Proto => 'tcp',
            Listen => 64, ReuseAddr => 1,
        ) or croak "cannot listen on $HOST: $@";
    }
    socketpair(my $mine, my $theirs, AF_UNIX, SOCK_STREAM, PF_UNSPEC)
        or croak "socketpair: $!";
    my $seed   = defined $opt{seed} ? $opt{seed} : int rand 2**31;
    my $parent = $$;
    my $pid = fork;
    croak "fork failed: $!" unless defined $pid;
    if (!$pid) {    # child: serve, then leave without END
        close $mine;
        my $ok = eval {
            _serve(\%listen, $theirs, $opt{backend}, $seed, $parent); 1 };
        print STDERR "fault proxy: $@" unless $ok;
        POSIX::_exit($ok ? 0 : 1);
    }
    close $theirs;
    $mine->autoflush(1);
    my %port = map { $_ => $listen{$_}->sockport } @lanes;
    close $_ for values %listen;    # later children must not hold them
    $class->_track($pid);
    return bless {
        host => $HOST, port => $port{ $lanes[0] }, pid => $pid, owner => $$,
        lanes => \@lanes, lane_port => \%port, control => $mine,
    }, $class;
}

sub lanes { @{ $_[0]{lanes} } }

sub address_of {
    my ($self, $lane) = @_;
    my $port = $self->{lane_port}{$lane};
    croak "no lane '$lane'" unless defined $port;
    return "$HOST:$port";
}

# Where new connections go from now on ("HOST:PORT"), or undef: none (they
# are closed at once). Returns once the proxy has taken it.
sub backend {
    my ($self, $address) = @_;
    my $reply = $self->_ask('backend ' . (defined $address ? $address : '-'));
    croak "fault proxy did not take the backend: $reply" unless $reply eq 'ok';
    return;
}

# { lane => { conns => N, cut_data => N, ... } }, every count present.
sub counts {
    my ($self) = @_;
    my %counts = map { my $lane = $_; ($lane => { map { $_ => 0 } @COUNTS }) }
                 @{ $self->{lanes} };
    for my $item (split ' ', $self->_ask('counts')) {
        my ($lane, $name, $n) = $item =~ /\A([^:]+):(\w+)=(\d+)\z/
            or croak "fault proxy: bad count '$item'";
        $counts{$lane}{$name} = $n;
    }
    return \%counts;
}

sub count_names { @COUNTS }

# One request line to the proxy, one reply line back.
sub _ask {
    my ($self, $request) = @_;
    my $sock = $self->{control};
    croak "fault proxy is not running" unless $self->{pid};
    print {$sock} "$request\n" or croak "fault proxy: write: $!";
    my ($buf, $sel) = ('', IO::Select->new($sock));
    my $deadline = time + $ASK_TIMEOUT;
    while ($buf !~ /\n/) {
        my $left = $deadline - time;
        croak "fault proxy: no answer to '$request'"
            if $left <= 0 || !$sel->can_read($left);
        my $got = sysread $sock, $buf, 4096, length $buf;
        croak "fault proxy: gone (" . (defined $got ? 'EOF' : $!) . ')'
            unless $got;
    }
    chomp $buf;
    return $buf;
}

# --------------------------------------------------------------------------
# Child side: one select loop over every connection.

sub _serve {
    my ($listen, $control, $backend, $seed, $parent) = @_;
    srand $seed;
    $SIG{PIPE} = 'IGNORE';
    $SIG{$_} = 'DEFAULT' for qw(INT TERM HUP);
    my %lane_of = map { fileno($listen->{$_}) => $_ } keys %$listen;
    $_->blocking(0) for values %$listen;
    my (%count, @conns);
    my $ctl_buf = '';
    while (getppid() == $parent) {
        my ($rin, $win, $timeout) = ('', '', $TICK);
        vec($rin, fileno($control), 1) = 1;
        vec($rin, $_, 1) = 1 for keys %lane_of;
        my $now = time;
        for my $c (@conns) {
            my $wait = _select_bits($c, \$rin, \$win, $now);
            $timeout = $wait if defined $wait && $wait < $timeout;
        }
        my ($rout, $wout) = ($rin, $win);
        my $n = select $rout, $wout, undef, $timeout;
        next if $n < 0;    # EINTR
        if (vec($rout, fileno($control), 1)) {
            my $got = sysread $control, $ctl_buf, 4096, length $ctl_buf;
            return unless $got;    # the parent is gone
            while ($ctl_buf =~ s/\A([^\n]*)\n//) {
                my $reply = _control($1, \$backend, \%count);
                syswrite $control, "$reply\n";
            }
        }
        for my $fd (grep { vec($rout, $_, 1) } keys %lane_of) {
            my $lane = $lane_of{$fd};
            while (my $client = $listen->{$lane}->accept) {
                my $c = _open($client, $lane, $backend, \%count);
                push @conns, $c if $c;
            }
        }
        $now = time;
        _pump($_, $rout, $wout, $now, \%count) for @conns;
        @conns = grep { $_->{client} } @conns;
    }
    return;
}

sub _control {
    my ($line, $backend, $count) = @_;
    if ($line =~ /\Abackend (\S+)\z/) {
        $$backend = $1 eq '-' ? undef : $1;
        return 'ok';
    }
    return join ' ', map { "$_=$count->{$_}" } sort keys %$count
        if $line eq 'counts';
    return "unknown request: $line";
}

# A new client connection: its backend connection, its plan, its state.
sub _open {
    my ($client, $lane, $backend, $count) = @_;
    $count->{"$lane:conns"}++;
    my $server = defined $backend && IO::Socket::INET->new(
        PeerAddr => $backend, Proto => 'tcp', Timeout => 1);
    if (!$server) {
        $count->{"$lane:refused"}++;
        close $client;
        return;
    }
    for my $sock ($client, $server) {
        binmode $sock;
        $sock->blocking(0);
        setsockopt($sock, IPPROTO_TCP, TCP_NODELAY, 1);
    }
    my $c = {
        lane => $lane, client => $client, server => $server,
        up   => _direction(),    # client to server
        down => _direction(),    # server to client, scanned for replies
    };
    _replan($c);
    return $c;
}

# Draw the plan for what comes next on the connection.
sub _replan {
    my ($c) = @_;
    my $plan = $c->{plan} = _pick_plan();
    $c->{down}{cut_at} = $c->{down}{scanned} + _log_spread($OFFSET_RANGE)
        if $plan eq 'offset';
    $c->{up}{cut_at} = $c->{up}{pos} + _log_spread($OFFSET_RANGE)
        if $plan eq 'request';
    return;
}

# One direction of a connection. Offsets count bytes from the start of the
# connection: pos (sent), scanned, sendable (may be sent), cut_at.
sub _direction {
    return { buf => '', pos => 0, scanned => 0, sendable => 0, eof => 0,
             next_at => 0, cut_at => undef, left => 0, values => 0 };
}

sub _pick_plan {
    my $roll = rand $PLAN_WEIGHT;
    for my $plan (@PLANS) {
        return $plan->[0] if ($roll -= $plan->[1]) < 0;
    }
    return $PLANS[-1][0];
}

# An integer from 1 to $max, as likely in 1..10 as in 10_000..100_000.
sub _log_spread {
    my ($max) = @_;
    my $n = int exp rand log $max;
    return $n < 1 ? 1 : $n;
}

# Ask select for what this connection can use now; returns how long until a
# paused direction may write again (undef: nothing is waiting).
sub _select_bits {
    my ($c, $rin, $win, $now) = @_;
    my $wait;
    for my $side ([up => 'client', 'server'], [down => 'server', 'client']) {
        my ($name, $from, $to) = @$side;
        my $dir = $c->{$name};
        vec($$rin, fileno($c->{$from}), 1) = 1
            if $c->{$from} && !$dir->{eof} && length $dir->{buf} < $BUFFER_MAX;
        next unless $c->{$to} && _limit($dir) > $dir->{pos};
        if ($c->{stall_until}) {
            my $left = $c->{stall_until} - $now;
            $wait = $left if !defined $wait || $left < $wait;
            next;
        }
        if ($dir->{next_at} > $now) {
            my $left = $dir->{next_at} - $now;
            $wait = $left if !defined $wait || $left < $wait;
            next;
        }
        vec($$win, fileno($c->{$to}), 1) = 1;
    }
    # Let a stall end, or the cut at its end happen, on time.
    if ($c->{stall_until} && _at_cut($c->{down})) {
        my $left = $c->{stall_until} - $now;
        $wait = $left if !defined $wait || $left < $wait;
    }
    return defined $wait && $wait < 0 ? 0 : $wait;
}

# The offset up to which a direction may send now: what is sendable, but
# never past a planned cut.
sub _limit {
    my ($dir) = @_;
    my $limit = $dir->{sendable};
    $limit = $dir->{cut_at} if defined $dir->{cut_at} && $dir->{cut_at} < $limit;
    return $limit;
}

sub _at_cut {
    my ($dir) = @_;
    return defined $dir->{cut_at} && $dir->{pos} >= $dir->{cut_at};
}

# Move what can be moved on one connection, cut it when its plan says so.
sub _pump {
    my ($c, $rout, $wout, $now, $count) = @_;
    # Reads: the client's requests, the server's replies.
    if (vec($rout, fileno($c->{client}), 1)) {
        my $dir = $c->{up};
        my $got = sysread $c->{client}, $dir->{buf}, 65_536, length $dir->{buf};
        return _close($c) if defined $got ? $got == 0 : !_again();    # hung up
        $dir->{sendable} = $dir->{pos} + length $dir->{buf};
    }
    if ($c->{server} && vec($rout, fileno($c->{server}), 1)) {
        my $dir = $c->{down};
        my $got = sysread $c->{server}, $dir->{buf}, 65_536, length $dir->{buf};
        if (defined $got ? $got == 0 : !_again()) {
            # The server went away (killed): what it sent still goes out.
            $dir->{eof} = 1;
            close $c->{server};
            $c->{server} = undef;
            $dir->{sendable} = $dir->{pos} + length $dir->{buf};
        }
        else {
            _scan($c);
        }
    }
    # Writes, a piece at a time, each maybe followed by a pause.
    if (!$c->{stall_until}) {
        _send_piece($c, $c->{down}, $c->{client}, $now)
            if vec($wout, fileno($c->{client}), 1);
        return unless $c->{client};    # closed on a write error
        _send_piece($c, $c->{up}, $c->{server}, $now)
            if $c->{server} && vec($wout, fileno($c->{server}), 1);
        return unless $c->{client};
    }
    # Cuts.
    if (_at_cut($c->{up})) {
        $count->{"$c->{lane}:cut_request"}++;
        return _close($c, 1);
    }
    if (_at_cut($c->{down})) {
        if ($c->{plan} eq 'stall') {    # counted when the silence starts
            if (!$c->{stall_until}) {
                $c->{stall_until} = $now + $STALL;
                $count->{"$c->{lane}:cut_stall"}++;
            }
            return if $now < $c->{stall_until};
            return _close($c, 1);
        }
        $count->{"$c->{lane}:cut_$c->{plan}"}++;
        return _close($c, 1);
    }
    if ($c->{down}{eof} && $c->{down}{pos} >= $c->{down}{sendable}) {
        $count->{"$c->{lane}:backend_lost"}++;
        return _close($c);
    }
    return;
}

sub _send_piece {
    my ($c, $dir, $to, $now) = @_;
    my $n = _limit($dir) - $dir->{pos};
    return if $n <= 0;
    my $piece = _log_spread($PIECE_MAX);
    $n = $piece if $n > $piece;
    my $put = syswrite $to, $dir->{buf}, $n;
    if (!$put) {
        _close($c) unless defined $put || _again();
        return;
    }
    substr($dir->{buf}, 0, $put, '');
    $dir->{pos} += $put;
    $dir->{next_at} = $now + rand $DELAY_MAX if rand() < $DELAY_CHANCE;
    return;
}

# Follow the replies (VALUE lines, data blocks, END) in what the server sent,
# and mark how far it may be sent: a line only once it is whole, so that a
# cut can be planned inside it before any of it has gone out.
sub _scan {
    my ($c) = @_;
    my $dir = $c->{down};
    my $got = $dir->{pos} + length $dir->{buf};
    while ($dir->{scanned} < $got) {
        if ($dir->{left}) {    # inside a data block and its "\r\n"
            my $n = $got - $dir->{scanned};
            $n = $dir->{left} if $n > $dir->{left};
            $dir->{scanned} += $n;
            $dir->{left}    -= $n;
            next;
        }
        my $from = $dir->{scanned} - $dir->{pos};
        my $eol  = index $dir->{buf}, "\r\n", $from;
        last if $eol < 0;    # the rest of the line is still to come
        my $line  = substr $dir->{buf}, $from, $eol - $from;
        my $start = $dir->{scanned};
        my $len   = $eol - $from + 2;
        $dir->{scanned} += $len;
        if ($line =~ /\AVALUE \S+ \d+ (\d+)/) {
            $dir->{left} = $1 + 2;
            $dir->{values}++;
            _plan_cut($c, value => $start, $len, $1);
            next;
        }
        _plan_cut($c, end => $start, $len) if $line eq 'END';
        # A reply ended (END, STORED, ...): a new plan, unless a cut is due.
        $dir->{values} = 0;
        _replan($c) unless defined $dir->{cut_at} || defined $c->{up}{cut_at};
    }
    $dir->{sendable} = $dir->{scanned};
    return;
}

sub _plan_cut {
    my ($c, $what, $start, $len, $bytes) = @_;
    my $dir  = $c->{down};
    my $plan = $c->{plan};
    return if defined $dir->{cut_at};
    if ($what eq 'value') {
        if ($plan eq 'value_line' && rand() < $CUT_CHANCE) {
            # After its first byte, up to between its "\r" and "\n".
            $dir->{cut_at} = $start + 1 + int rand($len - 1);
        }
        elsif (($plan eq 'data' || $plan eq 'stall') && rand() < $CUT_CHANCE) {
            # From before its first byte to between its "\r" and "\n".
            $dir->{cut_at} = $start + $len + int rand($bytes + 2);
        }
    }
    elsif ($plan eq 'before_end'
           && ($dir->{values} || rand() < $BARE_END_CHANCE)) {
        $dir->{cut_at} = $start;
    }
    return;
}

# Whether a failed read or write only has to be tried again later.
sub _again { return $! == EAGAIN || $! == EWOULDBLOCK || $! == EINTR }

# Close both ends; a cut closes the client's end with RST now and then.
sub _close {
    my ($c, $cut) = @_;
    if ($cut && rand() < $RESET_CHANCE) {
        setsockopt($c->{client}, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0));
    }
    close $c->{client};
    close $c->{server} if $c->{server};
    $c->{client} = $c->{server} = undef;
    return;
}

1;

__END__

=head1 NAME

CMRXTest::FaultProxy - a loopback proxy in front of memcached that cuts replies and splits writes

=head1 SYNOPSIS

    use lib 't/lib';
    use CMRXTest::Memcached;
    use CMRXTest::FaultProxy;

    my $mc    = CMRXTest::Memcached->start;
    my $proxy = CMRXTest::FaultProxy->start(
        backend => $mc->address, lanes => [qw(alice bob)]);
    my $client = SomeClient->new(servers => [ $proxy->address_of('alice') ]);
    ...
    $proxy->backend(undef);          # new connections are closed at once
    $mc = CMRXTest::Memcached->start;
    $proxy->backend($mc->address);   # and go to the new server from now on
    my $counts = $proxy->counts;     # { alice => { conns => 12, cut_data => 3, ... } }
    $proxy->stop;                    # or let it go out of scope / END

=head1 DESCRIPTION

C<start> binds one listening socket per I<lane> on 127.0.0.1 (free ports),
then forks a child that serves all of them in one select loop. Each
accepted connection gets its own connection to the backend (none while the
backend is undef: the client's connection is then closed at once, counted
as C<refused>). Lanes are only for counting: give each client its own lane
and the counts say what happened to that client.

Every write, in both directions, is a piece of 1 to 65 536 bytes (spread
evenly on a log scale, so most pieces are small), and after three pieces
in ten the direction pauses for up to 2 ms. Sockets have C<TCP_NODELAY>,
so the pieces arrive as separate reads.

Each connection is given a plan when it is accepted, and a new one after
each reply (C<END>, C<STORED>, ...) that ended without a cut being due:

=over 4

=item none (60 %)

Pass everything through, split and delayed.

=item value_line (10 %), data (13 %), before_end (10 %)

Cut the connection inside a C<VALUE> line (after its first byte, up to
between its C<\r> and C<\n>), inside a data block (from before its first
byte to between the C<\r> and C<\n> after it), or just before the C<END> of
a reply (of a reply with values; of one without, one time in five). At each
C<VALUE> that fits, the cut is placed with probability 1/2, so it falls on
a random value of a reply.

=item offset (3.5 %), request (3.4 %)

Cut at a random later byte (1 to 600 000 on, log-spread) of the reply
stream or of the request stream (inside a C<set>'s data, say).

=item stall (0.1 %)

Like data, but stop sending for 1.5 s first (past both clients' default
timeouts), then cut.

=back

To place a cut before any byte of the line it falls in has been sent, the
proxy follows the replies of the text protocol (C<VALUE> lines, data blocks
of the declared length, C<END>) and sends a line only once it is whole.
A cut closes both connections, the client's with a TCP RST three times in
ten. When the backend goes away (a killed memcached), what it sent is still
passed on, then the client's connection is closed (C<backend_lost>).

=head1 METHODS

=over 4

=item C<< CMRXTest::FaultProxy->start(backend => ADDR, lanes => [NAMES], seed => N) >>

Starts the proxy. C<backend> is C<"HOST:PORT"> or undef; C<lanes> default
to C<['default']>; C<seed> (default random) seeds the child's C<rand>.

=item C<address_of($lane)>, C<lanes>

C<"127.0.0.1:PORT"> of a lane; the lane names. C<address> and C<port> are
the first lane's.

=item C<backend($address)>

Where connections accepted from now on go; undef for nowhere. Returns when
the proxy has taken it.

=item C<counts>

A hash of lanes, each a hash of counts: C<conns> (accepted), C<refused>
(no backend), C<cut_value_line>, C<cut_data>, C<cut_before_end>,
C<cut_offset>, C<cut_request>, C<cut_stall> (cuts made by plan),
C<backend_lost> (the backend closed under a client).

=item C<< CMRXTest::FaultProxy->count_names >>

The names of those counts, in that order.

=item C<stop>, C<pid>

From L<CMRXDev::ChildProcess>: the child is stopped by C<stop>, when the
object is destroyed and at C<END>, only by the process that started it. It
also quits within a quarter of a second when its parent is gone.

=back

=cut
