package CMRXBench::Data;

# Inputs of the benchmark: the two sample files, deterministic values cut
# from the document, a synthetic JPEG, and raw memcached look-ups. (The
# corpus of real values is read by dev/lib's CMRXDev::Corpus, and get
# responses by its CMRXDev::GetResponse, which the tests use too.)

use strict;
use warnings;
use IO::Socket::INET ();
use Exporter 'import';

use CMRXDev::GetResponse qw(stored_items);

our @EXPORT_OK = qw(data_files slurp text_value fake_jpeg raw_get_flags server_version);

# The two sample inputs: a real 9 KB JSON value from a production cache
# (t/data/seed.json, also used by the tests) and 300 KB of real text, perl's
# own perldiag.pod (bench/data/). BENCH_DATA names another folder holding
# both.
sub data_files {
    my ($root) = @_;
    my %file = defined $ENV{BENCH_DATA}
        ? (json => "$ENV{BENCH_DATA}/seed.json", doc => "$ENV{BENCH_DATA}/perldiag.pod")
        : (json => "$root/t/data/seed.json", doc => "$root/bench/data/perldiag.pod");
    -f $_ or die "benchmark input $_ not found (BENCH_DATA names a folder holding seed.json and perldiag.pod)\n"
        for values %file;
    return \%file;
}

sub slurp {
    my ($path) = @_;
    open my $fh, '<:raw', $path or die "$path: $!\n";
    local $/;
    return scalar <$fh>;
}

# $size bytes of real text, starting at a different place for each $i.
sub text_value {
    my ($doc, $i, $size) = @_;
    my $off = ($i * 7919) % length $doc;
    my $s = '';
    while (length $s < $size) {
        $s .= substr($doc, $off, $size - length $s);
        $off = 0;
    }
    return $s;
}

# A JPEG-looking payload: SOI + APP0/JFIF header, then incompressible bytes
# (xorshift32, so the same on every machine), then EOI.
sub fake_jpeg {
    my ($size) = @_;
    my $head = "\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00";
    my $x = 2463534242;
    my @w;
    for (1 .. int(($size - length($head) - 2) / 4)) {
        $x ^= ($x << 13) & 0xffffffff;
        $x ^= $x >> 17;
        $x ^= ($x << 5) & 0xffffffff;
        push @w, $x;
    }
    return $head . pack('N*', @w) . "\xff\xd9";
}

sub _talk {
    my ($addr, $cmd, $until) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => $addr, Timeout => 2) or return;
    print $s $cmd;
    my $buf = '';
    while ($buf !~ $until) {
        my $r = sysread($s, $buf, 65536, length $buf);
        last unless $r;
    }
    return $buf;
}

# Flags of a stored item as the server holds them, looked up on each server
# in turn (undef: miss). Dies on a reply that is not a get response.
sub raw_get_flags {
    my ($servers, $key) = @_;
    for my $addr (@$servers) {
        my $reply = _talk($addr, "get $key\r\n", qr/(?:^|\n)END\r\n\z|ERROR/) // next;
        my $items = eval { stored_items($reply) } or die "get $key from $addr: $@";
        return $items->[0][1] if @$items;
    }
    return undef;
}

sub server_version {
    my ($addr) = @_;
    my $r = _talk($addr, "version\r\n", qr/\r\n/) // return undef;
    return $r =~ /^VERSION (\S+)/ ? $1 : undef;
}

1;
