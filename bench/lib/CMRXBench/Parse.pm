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

our @EXPORT_OK = qw(get_response finalize_for socket_pair parse_once parse_timed check_parse);

use constant MAX_IDLE_CALLS => 200_000;    # a parser that never finishes

# 'VALUE key flags len\r\n<data>\r\n' ... 'END\r\n' for [key, flags, data]
sub get_response {
    my (@items) = @_;
    return join('', map { "VALUE $_->[0] $_->[1] " . length($_->[2]) . "\r\n$_->[2]\r\n" } @items) . "END\r\n";
}

# The finalize closure of Cache::Memcached 1.30 _load_multi, for %$ret.
sub finalize_for {
    my ($ret) = @_;
    return sub {
        my $map = $_[0];
        $map = {@_} unless ref $map;

        while (my ($k, $flags) = each %$map) {
            # remove trailing \r\n
            chop $ret->{$k}; chop $ret->{$k};

            $ret->{$k} = Compress::Zlib::memGunzip($ret->{$k})
                if $flags & 2;
            if ($flags & 1) {
                eval { $ret->{$k} = Storable::thaw($ret->{$k}) };
                delete $ret->{$k} if $@;
            }
        }
    };
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
# parser's on_item is Cache::Memcached's finalize, unless $raw: then a no-op,
# which measures the parser's own work alone (values keep their CRLF).
sub parse_timed {
    my ($class, $resp, $nslen, $raw) = @_;
    my ($rd, $wr) = socket_pair();
    my %dest;
    my $on_item = $raw ? sub { } : finalize_for(\%dest);
    return sub {
        my $n = shift;
        my $dt = 0;
        for (1 .. $n) {
            %dest = ();
            $dt += parse_once($class, $rd, $wr, $resp, $nslen, \%dest, $on_item);
        }
        return $dt;
    };
}

# Parse once on a fresh socketpair and compare with %$expect (key => value).
sub check_parse {
    my ($class, $resp, $nslen, $expect) = @_;
    my ($rd, $wr) = socket_pair();
    my %dest;
    my $ok = eval { parse_once($class, $rd, $wr, $resp, $nslen, \%dest, finalize_for(\%dest)); 1 };
    (my $err = $@) =~ s/\s+$//;
    return "parse failed: $err" unless $ok;
    return compare_values(\%dest, $expect);
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
