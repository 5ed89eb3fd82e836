package CMRXTest::LeakOps;

# Test helper: the operations the leak tests repeat -- every entry point of
# the XS layer and the Rust engine, on good and on bad input, each checking
# its own result. Shared by t/30-leaks.t (CMRXTest::LeakCheck's no_leaks)
# and xt/leak-soak.t (RSS over many cycles). See the POD at the end.

use strict;
use warnings;

use Compress::Zlib ();
use Exporter 'import';

use Cache::Memcached::RustXS::GetParser;
use Cache::Memcached::RustXS::Zlib ();
use CMRXTest::Protocol qw(value_item pair finalizer);

our $VERSION   = '0.01';
our @EXPORT_OK = qw(leak_ops);

my $CLASS = 'Cache::Memcached::RustXS::GetParser';
my $Z     = 'Cache::Memcached::RustXS::Zlib';

# ---- fixtures ------------------------------------------------------------------

my $plain_a = 'hello world';
my $plain_b = join(',', map { "item$_" } 1 .. 60);    # compressible
my $plain_c = join '', map { chr } 0 .. 255;           # binary, NULs
my $gz_b    = Compress::Zlib::memGzip($plain_b);        # a real zlib gzip

my $GOOD = value_item('ns:a', 0, $plain_a)
         . value_item('ns:b', 2, $gz_b, 12345)
         . value_item('ns:c', 4, $plain_c)
         . "END\r\n";
my %GOOD_WANT = (a => "$plain_a\r\n", b => "$plain_b\r\n", c => "$plain_c\r\n");
my %GOOD_FLAGS = (a => 0, b => 0, c => 4);    # b's flag 2 cleared: gunzipped

my $TRUNC_GZ = substr($gz_b, 0, int(length($gz_b) / 2));
my @BAD = (
    [ 'SERVER_ERROR'     => value_item('ns:a', 0, 'x') . "SERVER_ERROR out of memory\r\n", -1 ],
    [ 'bad terminator'   => "VALUE ns:a 0 5\r\nhelloXXEND\r\n", -1 ],
    # Well framed, but the gzip inside is cut in half: stays raw with flag 2.
    [ 'truncated gzip'   => value_item('ns:z', 2, $TRUNC_GZ) . "END\r\n", 1 ],
    [ 'partial value'    => "VALUE ns:p 0 100\r\nabc", 0 ],    # then destroyed
);

# A value large enough for parse_from_sock's read-straight-into-the-scalar
# path (more than 32 KiB still to come after the first 64 KiB read).
my $BIG      = join '', map { sprintf '%07d|', $_ } 1 .. 12_500;    # 100 000 B
my $BIG_RESP = value_item('big', 0, $BIG) . "END\r\n";

my $JSON    = '{"id":42,"tags":[' . join(',', map { "\"t$_\"" } 1 .. 80) . ']}';
my $JSON_GZ = $Z->can('memGzip')->($JSON);
my $JSON_Z  = $Z->can('compress')->($JSON);
my $CORRUPT_GZ = substr($JSON_GZ, 0, 12) . ("\xAA" x 40) . substr($JSON_GZ, 52);
my $CORRUPT_Z  = substr($JSON_Z, 0, 4) . ("\x55" x 30);
my $JPEG    = "\xFF\xD8\xFF\xE0\0\x10JFIF\0" . ('jpegdata' x 50);

# Both ends non-blocking: the reader as Cache::Memcached's sockets are, the
# writer so that sock_big never blocks.
my ($RD, $WR) = pair(nonblocking_writer => 1);

# ---- the operations (each returns true when the result is right) ------------------

my %OPS;
$OPS{parse_good} = sub {
    my (%dest, %seen);
    my $parser = $CLASS->new(\%dest, 3, sub { @seen{ keys %{ $_[0] } } = values %{ $_[0] } });
    return $parser->parse_from_string($GOOD) == 1
        && keys(%dest) == 3
        && $dest{a} eq $GOOD_WANT{a} && $dest{b} eq $GOOD_WANT{b}
        && $dest{c} eq $GOOD_WANT{c}
        && $seen{a} == 0 && $seen{b} == 0 && $seen{c} == 4
        && !defined $parser->current_key;
};
$OPS{parse_good_finalized} = sub {    # with a finalize that edits dest
    my (%dest, %seen);
    my $parser = $CLASS->new(\%dest, 3, finalizer(\%dest, \%seen));
    return $parser->parse_from_string(substr $GOOD, 0, 40) == 0
        && $parser->parse_from_string(substr $GOOD, 40) == 1
        && $dest{b} eq $plain_b && $dest{a} eq $plain_a;
};
for my $bad (@BAD) {
    my ($name, $resp, $want) = @$bad;
    $OPS{"parse_bad: $name"} = sub {
        my (%dest, %seen);
        my $parser = $CLASS->new(\%dest, 3, finalizer(\%dest, \%seen));
        my $rv = $parser->parse_from_string($resp);
        return 0 unless $rv == $want;
        return $rv == 0 ? $parser->current_key eq 'p' && !exists $dest{p}
             : $name eq 'truncated gzip'
                 ? $dest{z} eq $TRUNC_GZ && $seen{z} == 2
             : $name eq 'SERVER_ERROR'
                 ? $dest{a} eq 'x' && $parser->parse_from_string("END\r\n") == -1
             : $parser->parse_from_string("END\r\n") == -1;    # stays failed
    };
}
$OPS{response_items} = sub {    # the items as stored: b keeps its gzip and flag 2
    my ($items, $complete) = Cache::Memcached::RustXS::GetParser::get_response_items($GOOD);
    return $complete && @$items == 3 && $items->[1][1] == 2 && $items->[1][2] eq $gz_b && $items->[1][3] == 12345;
};
$OPS{response_items_bad} = sub {    # croaks, with the items made so far freed
    return !eval { Cache::Memcached::RustXS::GetParser::get_response_items($BAD[0][1]); 1 }
        && $@ =~ /SERVER_ERROR/
        && !eval { Cache::Memcached::RustXS::GetParser::get_response_items($BAD[1][1]); 1 }
        && $@ =~ /after the value of ns:a/;
};
$OPS{sock_good} = sub {
    my %dest;
    my $parser = $CLASS->new(\%dest, 3, sub { });
    syswrite($WR, $GOOD) == length $GOOD or die "syswrite: $!";
    return $parser->parse_from_sock($RD) == 1 && $dest{b} eq $GOOD_WANT{b}
        && keys(%dest) == 3;
};
$OPS{sock_eagain} = sub {
    my %dest;
    my $parser = $CLASS->new(\%dest, 0, sub { });
    return $parser->parse_from_sock($RD) == 0 && !%dest;
};
$OPS{sock_partial_dropped} = sub {    # parser freed with a value in progress
    my %dest;
    my $parser = $CLASS->new(\%dest, 0);
    syswrite($WR, "VALUE q 0 50\r\n0123456789") or die "syswrite: $!";
    my $ok = $parser->parse_from_sock($RD) == 0 && $parser->current_key eq 'q';
    return $ok && !%dest;
};
$OPS{sock_big} = sub {    # 100 KB value: read straight into its scalar
    my %dest;
    my $parser = $CLASS->new(\%dest, 0, sub { });
    my $off = 0;
    my $rv = 0;
    while ($rv == 0) {
        if ($off < length $BIG_RESP) {
            my $put = syswrite($WR, $BIG_RESP, 65536, $off);
            $off += $put if $put;
        }
        $rv = $parser->parse_from_sock($RD);
    }
    return $rv == 1 && $dest{big} eq "$BIG\r\n";
};
$OPS{memGzip} = sub {
    my $gz = Cache::Memcached::RustXS::Zlib::memGzip($JSON);
    my $gz_ref = Cache::Memcached::RustXS::Zlib::memGzip(\$plain_c);
    return defined $gz && length($gz) < length($JSON) && defined $gz_ref;
};
$OPS{memGunzip_good} = sub {
    my $out = Cache::Memcached::RustXS::Zlib::memGunzip($JSON_GZ);
    return defined $out && $out eq $JSON && $Compress::Zlib::gzerrno == 0;
};
$OPS{memGunzip_corrupt} = sub {
    my $corrupt   = Cache::Memcached::RustXS::Zlib::memGunzip($CORRUPT_GZ);
    my $truncated = Cache::Memcached::RustXS::Zlib::memGunzip(\$TRUNC_GZ);
    my $not_gzip  = Cache::Memcached::RustXS::Zlib::memGunzip('not gzip at all');
    return !defined $corrupt && !defined $truncated && !defined $not_gzip
        && $Compress::Zlib::gzerrno == -3;
};
$OPS{compress_uncompress} = sub {
    my $z   = Cache::Memcached::RustXS::Zlib::compress($JSON, 9);
    my $out = Cache::Memcached::RustXS::Zlib::uncompress($z);
    my $bad = Cache::Memcached::RustXS::Zlib::uncompress($CORRUPT_Z);
    my $lvl = Cache::Memcached::RustXS::Zlib::compress($JSON, 11);    # refused
    return defined $out && $out eq $JSON && !defined $bad && !defined $lvl;
};
$OPS{wide_character_croak} = sub {
    my $ok = !eval { Cache::Memcached::RustXS::Zlib::memGzip("\x{263A}"); 1 };
    return $ok && $@ =~ /Wide character/;
};
my $METHODS = Cache::Memcached::RustXS::Zlib::compress_methods(level => 6);
$OPS{fast_methods} = sub {
    my ($compress, $decompress) = @$METHODS;
    my ($gz, $back, $junk, $raw);
    my $ok = $compress->(\$JSON, \$gz) && $decompress->(\$gz, \$back) && $back eq $JSON;
    $ok &&= !$decompress->(\$CORRUPT_GZ, \$junk) && !defined $junk;
    $ok &&= !$compress->(\$JPEG, \$raw) && !defined $raw;    # sniffed: stored raw
    return $ok;
};
$OPS{fast_methods_made} = sub {    # the anonymous XSUBs are freed too
    my $methods = Cache::Memcached::RustXS::Zlib::compress_methods(level => 1,
                                                                  max_output => 100);
    my ($gz, $back);
    my $text = $plain_a x 8;    # shrinks (the compressor keeps only what does), within max_output
    return $methods->[0]->(\$text, \$gz) && !$methods->[1]->(\$JSON_GZ, \$back)
        && $methods->[1]->(\$gz, \$back) && $back eq $text;
};
$OPS{override_restore} = sub {
    Cache::Memcached::RustXS::Zlib::override_compress_zlib();
    my $gz  = Compress::Zlib::memGzip($plain_b);    # ours now
    my $out = Compress::Zlib::memGunzip($gz);
    my $on  = Cache::Memcached::RustXS::Zlib::compress_zlib_overridden();
    Cache::Memcached::RustXS::Zlib::restore_compress_zlib();
    return $on && defined $out && $out eq $plain_b
        && !Cache::Memcached::RustXS::Zlib::compress_zlib_overridden();
};

# name => code returning true when its result is right.
sub leak_ops { return \%OPS }

1;

__END__

=head1 NAME

CMRXTest::LeakOps - the operations the leak tests repeat

=head1 SYNOPSIS

    use CMRXTest::LeakOps qw(leak_ops);
    use CMRXTest::LeakCheck qw(no_leaks);

    my $ops = leak_ops();
    for my $name (sort keys %$ops) {
        ok $ops->{$name}->(), "$name: correct result";
        no_leaks("$name: no SV leaked", $ops->{$name});
    }

=head1 DESCRIPTION

C<leak_ops> returns a hash of name => operation. Each operation uses one
entry point (GetParser on strings and on a socket pair, including a value
read straight into its scalar, errors and a parser freed mid-value;
C<get_response_items> on a good and a bad response; the
Zlib functions on good, corrupt and refused input; compress_methods; the
Compress::Zlib override) and returns true when what it got is right, so a
repeated run checks results as well as memory. The operations share one
socket pair, made when the module is loaded. The check itself is
L<CMRXTest::LeakCheck>'s.

=cut
