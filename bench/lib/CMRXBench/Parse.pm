package CMRXBench::Parse;

# Parse-only measurement of a Cache::Memcached parser_class: a canned get
# response goes through an AF_UNIX socketpair and the parser reads it from the
# non-blocking end with parse_from_sock until it returns 1 (END seen).
#
# Only the parser's work is timed (new + parse_from_sock calls); writing the
# response into the socket is not. Responses larger than the socket buffer are
# written with a non-blocking loop interleaved with the parse calls.

use strict;
use warnings;
use Socket qw(AF_UNIX SOCK_STREAM PF_UNSPEC);
use IO::Handle ();
use Errno qw(EAGAIN EWOULDBLOCK EINTR);
use Compress::Zlib ();
use Storable ();
use CMRXBench::Runner qw(now);
use Exporter 'import';

our @EXPORT_OK = qw(get_response cache_memcached_finalize socket_pair parse_once parse_timed check_parse);

use constant MAX_IDLE_CALLS => 200_000;    # a parser that never finishes

# 'VALUE key flags len\r\n<data>\r\n' ... 'END\r\n' for [key, flags, data]
sub get_response {
    my (@items) = @_;
    return join('', map { "VALUE $_->[0] $_->[1] " . length($_->[2]) . "\r\n$_->[2]\r\n" } @items) . "END\r\n";
}

# Cache::Memcached's own finalize closure (made in _load_multi) and the hash
# it finalizes, captured from a real get_multi on $servers: the parse-only
# rows hand every parser exactly what Cache::Memcached hands it. (A copy of
# the closure's code would not do: a parser may recognise the real one.)
{
    package CMRXBench::Parse::Capture;
    our @captured;
    sub new {
        my ($class, $ret, $nslen, $finalize) = @_;
        @captured = ($ret, $finalize);
        return Cache::Memcached::GetParser->new($ret, $nslen, $finalize);
    }
}

sub cache_memcached_finalize {
    my ($servers) = @_;
    require Cache::Memcached;
    require Cache::Memcached::GetParser;
    my $memd = Cache::Memcached->new({
        servers => $servers, parser_class => 'CMRXBench::Parse::Capture',
    });
    local @CMRXBench::Parse::Capture::captured;
    $memd->get_multi("cmrx-bench-capture-$$");    # a miss is enough
    my ($ret, $finalize) = @CMRXBench::Parse::Capture::captured;
    die "could not capture Cache::Memcached's finalize from a get_multi on @$servers\n"
        unless $finalize;
    return ($ret, $finalize);
}

sub socket_pair {
    socketpair(my $rd, my $wr, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die "socketpair: $!";
    $rd->blocking(0);
    $wr->blocking(0);
    return ($rd, $wr);
}

sub _write_some {
    my ($wr, $resp, $off) = @_;
    my $w = syswrite($wr, $$resp, length($$resp) - $off, $off);
    return $w if defined $w;
    return 0 if $! == EAGAIN || $! == EWOULDBLOCK || $! == EINTR;
    die "write to socketpair: $!\n";
}

# One parse of the whole response into %$dest. Returns the seconds spent in
# the parser; dies if it fails (-1) or never finishes.
sub parse_once {
    my ($class, $rd, $wr, $resp, $nslen, $dest, $on_item) = @_;
    my $len = length $$resp;
    my $off = _write_some($wr, $resp, 0);
    my ($rv, $calls, $t0, $p) = (0, 0);

    if ($off == $len) {    # it all fits in the socket buffer: time in one go
        $t0 = now;
        $p  = $class->new($dest, $nslen, $on_item);
        $rv = $p->parse_from_sock($rd) while $rv == 0 && ++$calls < MAX_IDLE_CALLS;
        my $dt = now - $t0;
        die "parser returned $rv\n" if $rv < 0;
        die "parser did not finish\n" if $rv == 0;
        return $dt;
    }

    my $dt = 0;
    $t0 = now;
    $p  = $class->new($dest, $nslen, $on_item);
    $dt += now - $t0;
    while (1) {
        $t0 = now;
        $rv = $p->parse_from_sock($rd);
        $dt += now - $t0;
        last if $rv != 0;
        if ($off < $len) { $off += _write_some($wr, $resp, $off) }
        elsif (++$calls >= MAX_IDLE_CALLS) { die "parser did not finish\n" }
    }
    die "parser returned $rv\n" if $rv < 0;
    return $dt;
}

# A timed closure (n) -> seconds for one parser class and response. The
# parser's on_item is Cache::Memcached's finalize (captured from a get_multi
# on $servers), unless $raw: then a no-op, which measures the parser's own
# work alone (values keep their CRLF).
sub parse_timed {
    my ($class, $resp, $nslen, $servers, $raw) = @_;
    my ($rd, $wr) = socket_pair();
    my ($dest, $on_item) = $raw ? ({}, sub { }) : cache_memcached_finalize($servers);
    return sub {
        my $n = shift;
        my $dt = 0;
        for (1 .. $n) {
            %$dest = ();
            $dt += parse_once($class, $rd, $wr, $resp, $nslen, $dest, $on_item);
        }
        return $dt;
    };
}

# Parse once on a fresh socketpair, with Cache::Memcached's finalize, and
# compare with %$expect (key => value).
sub check_parse {
    my ($class, $resp, $nslen, $servers, $expect) = @_;
    my ($rd, $wr) = socket_pair();
    my ($dest, $on_item) = cache_memcached_finalize($servers);
    %$dest = ();
    my $ok = eval { parse_once($class, $rd, $wr, $resp, $nslen, $dest, $on_item); 1 };
    (my $why = $@) =~ s/\s+$//;
    return "parse failed: $why" unless $ok;
    return compare_values($dest, $expect);
}

# undef when equal, else a short description of the first differences.
sub compare_values {
    my ($got, $expect) = @_;
    my @bad;
    for my $k (sort keys %$expect) {
        if (!exists $got->{$k}) { push @bad, "missing $k"; next }
        my $g = $got->{$k};
        next if defined $g && $g eq $expect->{$k};
        push @bad, defined $g
            ? sprintf('%s: %d bytes, expected %d', $k, length $g, length $expect->{$k})
            : "$k: undef";
    }
    push @bad, map { "unexpected key '" . _printable($_) . "'" } grep { !exists $expect->{$_} } sort keys %$got;
    return undef unless @bad;
    my $n = @bad;
    splice @bad, 3;
    return "$n bad: " . join('; ', @bad) . ($n > 3 ? '; ...' : '');
}

sub _printable { my $s = shift; $s =~ s/([^\x21-\x7e])/sprintf '\\x%02x', ord $1/ge; substr($s, 0, 40) }

1;
