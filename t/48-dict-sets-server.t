#!/usr/bin/perl
# cmrx-dict train --all --server and report --dictionaries --server against
# a real memcached: the server's slab classes, its gzipped values decoded, a
# dictionary per prefix; values written with the set are misses for a stock
# client; report counts the stored values that name each dictionary ID.
# (t/47 runs the same commands on files; a process loads one set here, as
# sets of one folder each give their dictionaries IDs from 1.)
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Spec ();
use File::Temp ();
use POSIX ();
use Compress::Zlib ();
use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXDev::Corpus qw(corpus_values);
use CMRXTest::Memcached;

my $HAVE_JSON = eval { require JSON::PP; 1 };
my $HAVE_ZSTD = !system('sh', '-c', 'zstd --version >/dev/null 2>&1');
my $SCRIPT = File::Spec->catfile('bin', 'cmrx-dict');
my $TMP    = File::Temp::tempdir(CLEANUP => 1);
my $corpus = corpus_values('bench/data/values');
my %half;    # family => [ [key, value] of the even positions ], [ ... odd ]
for my $f (qw(gh npm compat method)) {
    my $v = $corpus->{$f};
    $half{$f} = [ [ @$v[ grep { $_ % 2 == 0 } 0 .. $#$v ] ], [ @$v[ grep { $_ % 2 } 0 .. $#$v ] ] ];
}

# ---- helpers -----------------------------------------------------------------

# Tests never depend on timings (bench/ measures speed): the set commands
# run without speed limits unless a case says otherwise.
my @NO_LIMITS = ('--compress-time', '0', '--decompress-time', '0');

sub run_dict {
    my ($args, $stdin) = @_;
    my $set_command = ($args->[1] || '') eq '--all' || grep { $_ eq '--dictionaries' } @$args;
    $args = [ @$args, @NO_LIMITS ] if $set_command && !grep { $_ eq '--compress-time' } @$args;
    my ($in, $out, $err) = map { File::Spec->catfile($TMP, "run.$_") } qw(in out err);
    write_file($in, defined $stdin ? $stdin : '');
    my $pid = fork;
    die "fork: $!" unless defined $pid;
    if (!$pid) {
        open STDIN,  '<', $in  or POSIX::_exit(126);
        open STDOUT, '>', $out or POSIX::_exit(126);
        open STDERR, '>', $err or POSIX::_exit(126);
        { exec $^X, '-Mblib', $SCRIPT, @$args }
        POSIX::_exit(127);
    }
    waitpid $pid, 0;
    return ($? >> 8, read_file($out), read_file($err));
}

sub read_file {
    my ($path) = @_;
    open my $fh, '<', $path or die "$path: $!";
    binmode $fh;
    local $/;
    my $data = <$fh>;
    return defined $data ? $data : '';
}

sub write_file {
    my ($path, $data) = @_;
    open my $fh, '>', $path or die "$path: $!";
    binmode $fh;
    print {$fh} $data;
    close $fh or die "$path: $!";
    return $path;
}

# A get response of [key, value] (or [key, value, flags]) items.
sub dump_of {
    my (@items) = @_;
    return join('', map { "VALUE $_->[0] " . ($_->[2] || 0) . ' ' . length($_->[1]) . "\r\n$_->[1]\r\n" } @items)
         . "END\r\n";
}

sub dump_file { my ($name, @items) = @_; write_file(File::Spec->catfile($TMP, $name), dump_of(@items)) }

sub json_of {
    my ($out) = @_;
    return eval { JSON::PP->new->decode($out) } || do { diag "not JSON: $@"; {} };
}

sub by_prefix { my ($r) = @_; return { map { ($_->{prefix} => $_) } @{ $r->{prefixes} || [] } } }

# ---- against memcached ----------------------------------------------------------------------

SKIP: {
    my $server = CMRXTest::Memcached->start_optional;
    skip(CMRXTest::Memcached->unavailable, 1) unless $server;
    skip 'Cache::Memcached::Fast is not installed', 1 unless eval { require Cache::Memcached::Fast; 1 };
    my $addr = $server->address;
    my $plain = Cache::Memcached::Fast->new({ servers => [$addr], compress_threshold => 100 });
    # Each value under 10 keys, gzipped by Fast's default: enough keys for
    # the dictionaries to pay for themselves.
    for my $copy (1 .. 10) {
        $plain->set("$_->[0]:$copy", $_->[1]) for @{ $half{gh}[0] }, @{ $half{compat}[0] };
    }
    my $dir = File::Spec->catfile($TMP, 'server-set');
    my ($st, $out, $err) = run_dict([ 'train', '--all', '--server', $addr, '--out-dir', $dir ]);
    is $st, 0, 'train --all --server: exit 0' or diag $err;
    like $out, qr/memory as memcached's \(stats settings/, "... with the server's slab classes";
    my $s = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir);
    is join(' ', grep { length } $s->prefixes), 'compat: gh:', '... a dictionary for each prefix (their gzip values decoded)'
        or diag $out;
    # Write gh:'s other half with the set, then report.
    my $methods = Cache::Memcached::RustXS::Zstd::compress_methods(dictionaries => $dir, prefix => 'gh:');
    my $zstd = Cache::Memcached::Fast->new({ servers => [$addr], compress_threshold => 100,
                                             compress_methods => $methods });
    $zstd->set(@$_) or die "set $_->[0] failed\n" for @{ $half{gh}[1] };
    # Values the writer did not compress (it declines data that does not
    # shrink to 0.8) are stored raw: a stock client reads those, and only
    # those.
    my @raw = map { $_->[0] } grep { my ($v, $o) = ($_->[1]); !($methods->[0]->(\$v, \$o) && length $o <= 0.8 * length $v) }
              @{ $half{gh}[1] };
    my $stock = $plain->get_multi(map { $_->[0] } @{ $half{gh}[1] });
    is join(' ', sort keys %$stock), join(' ', sort @raw),
        'a stock Fast sees the values the set compressed as misses';
    my $zstd_stored = @{ $half{gh}[1] } - @raw;
    SKIP: {
        skip 'JSON::PP is needed for --json', 1 unless $HAVE_JSON;
        ($st, $out, $err) = run_dict([ 'report', '--dictionaries', $dir, '--server', $addr, '--json' ]);
        is $st, 0, 'report --dictionaries --server: exit 0' or diag $err;
        my $r = json_of($out);
        my %named = map { ($_->{id} => $_->{named_by}) } @{ $r->{dictionaries} };
        is $named{ $s->current('gh:')->{id} }, $zstd_stored, "... counts the values naming gh:'s ID ($zstd_stored)";
        is join(' ', sort map { $_->{prefix} } @{ $r->{prefixes} }), 'compat: gh:', '... names every prefix';
    }
}

done_testing;
