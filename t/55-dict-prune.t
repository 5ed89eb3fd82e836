#!/usr/bin/perl
# cmrx-dict prune: a set's retired dictionaries that no sampled value names
# and that were retired long enough ago are removed, the others kept with
# the reason printed; --dry-run changes no byte; removed IDs stay in the
# manifest and are never given again (by the API or by train --all);
# every retirement is dated by the log. Against a real
# memcached: values naming chosen dictionary IDs are stored, pruned around,
# and read back by a reader that loaded the set before the prune (it keeps
# reading, and finds a dictionary added after it) and by a reader started
# after it (a value naming a removed ID is a miss, the others decode).
# Ages are set through the set's clock (decisions made in the past), never
# waited for.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use Digest::SHA ();
use File::Temp ();
use IO::Socket::INET ();
use POSIX ();
use Compress::Zlib ();
use Cache::Memcached::RustXS::Zstd qw(train_dictionary);
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXDev::Corpus qw(corpus_values);
use CMRXTest::Child qw(run_command);
use CMRXTest::DictSets qw(run_dict write_dump json_of @FIXED_TUNING @NO_LIMITS @AT_ONCE);
use CMRXTest::Peers qw(slurp spew);
use CMRXTest::Raw qw(raw_set raw_get);
use CMRXTest::Memcached;

my $Set = 'Cache::Memcached::RustXS::Zstd::DictionarySet';
my $HAVE_JSON = eval { require JSON::PP; 1 };
my $TMP    = File::Temp::tempdir(CLEANUP => 1);
my $DAY    = 86400;
my $corpus = corpus_values('bench/data/values');
my %V = map { my $f = $_; ($f => [ map { $_->[1] } @{ $corpus->{$f} } ]) } qw(gh npm compat news api);

# ---- helpers -----------------------------------------------------------------

# Every file of a folder (but the writers' lock) and its bytes.
sub snapshot {
    my ($dir) = @_;
    opendir my $dh, $dir or die "$dir: $!";
    return { map { ($_ => slurp("$dir/$_")) } grep { !/\A\.\.?\z/ && $_ ne '.lock' } readdir $dh };
}

# Runs $code with the set's clock at $at (epoch seconds).
sub at_time {
    my ($at, $code) = @_;
    local $Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock = sub { $at };
    return $code->();
}

# The line of dictionary $id in a prune's table.
sub row_of {
    my ($out, $id) = @_;
    return $out =~ /^ +$id  .*$/m ? $& : '';
}

sub error_of { my ($code) = @_; eval { $code->(); 1 } ? '' : $@ }

sub dictionary { my ($values, $size) = @_; return train_dictionary($values, size => $size || 4096) }

# ---- the manifest: retirement dates -------------------------------------------------

{
    my $dir = "$TMP/dates";
    my $s = $Set->create($dir);
    my $t0 = time - 3 * $DAY;
    at_time($t0, sub { $s->add(prefix => 'x:', dictionary => dictionary($V{gh}), level => 3, id => 201) });
    at_time($t0 + $DAY, sub { $s->add(prefix => 'x:', dictionary => dictionary($V{news}), level => 3, id => 202) });
    $s->write;
    my %row = map { ($_->{entry}{id} => $_) } $s->schedule;
    is_deeply [ @{ $row{201} }{qw(state since)} ], [ 'retired', POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime($t0 + $DAY)) ],
        'a dictionary replaced is retired since the decision that replaced it took effect';
    is $row{202}{state}, 'current', '... and the other current';
    my $text = slurp("$dir/manifest");
    $text =~ s/^(decision seq=2 .* effective=)\S+$/${1}soon/m;
    spew("$dir/manifest", $text);
    like error_of(sub { $Set->read($dir) }), qr/line \d+: effective must be YYYY-MM-DDTHH:MM:SSZ/,
        'a malformed date is refused, naming the line';
}

# ---- usage and errors ---------------------------------------------------------------

my $empty_dump = spew("$TMP/empty.dump", "END\r\n");
{
    my ($st, $out, $err) = run_dict([ 'prune', $empty_dump ]);
    is $st, 2, 'prune without --dictionaries: exit 2';
    like $err, qr/\Acmrx-dict: prune: --dictionaries DIR is needed; see cmrx-dict --help\n\z/, '... saying so';
    ($st, $out, $err) = run_dict([ 'prune', '--dictionaries', "$TMP/dates" ]);
    is $st, 2, 'prune without a server or files: exit 2';
    like $err, qr/--server HOST:PORT, or files of memcached get responses/, '... saying what it needs';
    for my $bad ('7x', 'soon', '-1d', '1d2h', '', '7 d') {
        ($st, $out, $err) = run_dict([ 'prune', '--dictionaries', "$TMP/dates", '--retired-for', $bad, $empty_dump ]);
        is $st, 2, "--retired-for '$bad': exit 2";
        like $err, qr/--retired-for must be a duration: a number and s, m, h, d or w \(7d, 36h, 3600s\), or a number of seconds, not '\Q$bad\E'/,
            '... saying what a duration is';
    }
    ($st, $out, $err) = run_dict([ 'prune', '--dictionaries', "$TMP/no-such-dir", $empty_dump ]);
    is $st, 1, 'a folder that does not exist: exit 1';
    like $err, qr{\Acmrx-dict: \Q$TMP\E/no-such-dir is not a dictionary set: cannot read \Q$TMP\E/no-such-dir/manifest: No such file or directory\n\z},
        '... one line saying why';
    ($st, $out, $err) = run_dict([ 'prune', '--dictionaries', "$TMP/dates", $empty_dump ]);
    is $st, 1, 'a malformed manifest: exit 1';
    like $err, qr{\Acmrx-dict: \Q$TMP\E/dates/manifest: line \d+: effective must be YYYY-MM-DDTHH:MM:SSZ, not 'soon': refused, nothing changed\n\z},
        '... naming the file and line';
    ($st, $out, $err) = run_dict([ 'prune', '--server', '127.0.0.1:11211', '--dictionaries', "$TMP/dates",
                                   $empty_dump ]);
    is $st, 2, '--server and files: exit 2';
    ($st, $out) = run_dict([ '--help' ]);
    like $out, qr/cmrx-dict prune --dictionaries DIR --server HOST:PORT/, '--help shows prune';
    like $out, qr/--retired-for DURATION/, '... and its options';
}

# ---- values from files ---------------------------------------------------------------

{
    my $dir = "$TMP/file-set";
    my $s = $Set->create($dir);
    at_time(time - 10 * $DAY, sub {
        $s->add(prefix => 'x:', dictionary => dictionary($V{gh}), level => 3, id => 101);
        $s->add(prefix => 'y:', dictionary => dictionary($V{npm}), level => 3, id => 103);
        $s->add(prefix => 'y:', dictionary => dictionary($V{compat}), level => 3, id => 104);  # 103 retired then
    });
    $s->add(prefix => 'x:', dictionary => dictionary($V{news}), level => 3, id => 102);    # 101 retired now
    $s->write;
    Cache::Memcached::RustXS::Zstd::load_dictionaries($dir);
    my $frame = sub { Cache::Memcached::RustXS::Zstd::compress($_[1], level => 3, dictionary => $_[0]) };
    my $dump = write_dump("$TMP/values.dump",
        [ 'y:1', $frame->(103, $V{npm}[0]), 2 ], [ 'y:2', $frame->(103, $V{npm}[1]), 2 ],
        [ 'y:3', $frame->(104, $V{npm}[2]), 2 ], [ 'x:1', $frame->(102, $V{gh}[0]), 2 ],
        [ 'x:2', Compress::Zlib::memGzip($V{gh}[1]), 2 ], [ 'x:3', $V{gh}[2], 0 ],
    );
    my $before = snapshot($dir);

    my ($st, $out, $err) = run_dict([ 'prune', '--dictionaries', $dir, '--retired-for', '0', '--dry-run', $dump ]);
    is $st, 0, 'prune --retired-for 0 --dry-run, values from a file: exit 0' or diag $err;
    like $out, qr/against \Q$dump\E: 6 keys listed, 6 values sampled \(2 prefixes\)/, '... says what it sampled';
    like row_of($out, 101), qr/ retired +.* 0 +\S+Z \(\d+s ago\) +would remove +retired \d+s ago, and no sampled value names it$/,
        '... with --retired-for 0, a dictionary retired now that no value names would go';
    like row_of($out, 103), qr/ 2 .* kept +still named by 2 sampled values$/, '... one still named stays';
    like $out, qr/^Would remove 1 dictionary \(\d+ bytes\): ID 101 \(x-101\.dict\)/m, '... the total';
    like $out, qr/^Dry run: the set was not changed\.$/m, '... and that it changed nothing';
    is_deeply snapshot($dir), $before, '... and no byte of the folder changed';

    ($st, $out, $err) = run_dict([ 'prune', '--dictionaries', $dir, $dump ]);
    is $st, 0, 'prune (7d), values from a file: exit 0' or diag $err;
    like $out, qr/retired at least 7d ago\./, '... the age, by default 7 days';
    like row_of($out, 101), qr/ kept +retired only \d+s ago$/, '... one retired now stays';
    like row_of($out, 103), qr/ kept +still named by 2 sampled values$/, '... and one still named';
    like $out, qr/^No dictionary to remove\.$/m, '... nothing removed';
    my $after = $Set->read($dir);
    is scalar($after->entries), 4, '... every dictionary still there';

    ($st, $out, $err) = run_dict([ 'prune', '--dictionaries', $dir, '--retired-for', '0', $dump ]);
    is $st, 0, 'prune --retired-for 0: exit 0' or diag $err;
    like row_of($out, 101), qr/ removed +retired \d+s ago, and no sampled value names it$/, '... removes it now';
    $after = $Set->read($dir);
    ok !$after->entry(101) && !-e "$dir/x-101.dict", '... from the manifest and the folder';
    is_deeply [ map { $_->{id} } $after->removed ], [101], '... its ID kept as removed';
    ok eval { $after->verify }, '... the files of the others as the manifest lists them' or diag $@;

    SKIP: {
        skip 'JSON::PP is needed for --json', 5 unless $HAVE_JSON;
        ($st, $out, $err) = run_dict([ 'prune', '--dictionaries', $dir, '--retired-for', '36h', '--json', $dump ]);
        is $st, 0, 'prune --json: exit 0' or diag $err;
        my $r = json_of($out);
        is $r->{retired_for}, 36 * 3600, '... --retired-for 36h is 129600 seconds';
        my %d = map { ($_->{id} => $_) } @{ $r->{dictionaries} || [] };
        is_deeply [ map { "$_:$d{$_}{action}:$d{$_}{named_by}" } sort keys %d ], [ '102:keep:1', '103:keep:2', '104:keep:1' ],
            '... per dictionary, the action and the values naming it';
        is $d{103}{why}, 'still named by 2 sampled values', '... and why';
        ok !$r->{changed}, '... nothing changed';
    }
}

# ---- against memcached ---------------------------------------------------------------

my $dead_port = do {
    my $sock = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 1) or die "listen: $!";
    my $port = $sock->sockport;
    close $sock;
    $port;
};
{
    my $before = snapshot("$TMP/file-set");
    my ($st, $out, $err) = run_dict([ 'prune', '--dictionaries', "$TMP/file-set", '--server', "127.0.0.1:$dead_port",
                                      '--timeout', '2' ]);
    is $st, 1, 'a server that cannot be reached: exit 1';
    like $err, qr/\Acmrx-dict: cannot connect to 127\.0\.0\.1:$dead_port: .+\n\z/, '... saying so in one line';
    is_deeply snapshot("$TMP/file-set"), $before, '... and the set is as it was';
}

SKIP: {
    my $server = CMRXTest::Memcached->start_optional;
    skip(CMRXTest::Memcached->unavailable, 1) unless $server;
    my $addr = $server->address;
    my $dir = "$TMP/server-set";

    # a: 1 (retired 30 days ago, still named), 2 (retired 30 days ago, not
    # named), 3 (current); b: 4 (retired 2 hours ago, not named), 5
    # (current); c: 6 (retired now), 7 (current). The IDs the test
    # process gives sets from here on are other than the file set's.
    my $s = $Set->create($dir);
    at_time(time - 30 * $DAY, sub {
        $s->add(prefix => 'a:', dictionary => dictionary([ @{ $V{gh} }[ 0 .. 30 ] ]), level => 3, id => 1);
        $s->add(prefix => 'a:', dictionary => dictionary([ @{ $V{gh} }[ 31 .. 61 ] ]), level => 3, id => 2);
        $s->add(prefix => 'a:', dictionary => dictionary($V{gh}), level => 3, id => 3);
        $s->add(prefix => 'b:', dictionary => dictionary([ @{ $V{npm} }[ 0 .. 60 ] ]), level => 3, id => 4);
        $s->add(prefix => 'c:', dictionary => dictionary([ @{ $V{compat} }[ 0 .. 50 ] ]), level => 3, id => 6);
    });
    at_time(time - 2 * 3600, sub {
        $s->add(prefix => 'b:', dictionary => dictionary($V{npm}), level => 3, id => 5);
    });
    $s->add(prefix => 'c:', dictionary => dictionary($V{compat}), level => 3, id => 7);
    $s->write;

    # A reader that loads the set now and keeps running through the prunes
    # (it reads the set again whenever a frame names a dictionary it has not).
    pipe my $reader_in, my $to_reader or die "pipe: $!";
    pipe my $reader_out, my $from_reader or die "pipe: $!";
    my $reader = fork;
    die "fork: $!" unless defined $reader;
    if (!$reader) {
        close $to_reader;
        close $reader_out;
        $from_reader->autoflush(1);
        my @warnings;
        local $SIG{__WARN__} = sub { push @warnings, $_[0] };
        my $ok = eval { Cache::Memcached::RustXS::Zstd::load_dictionaries($dir, rescan_interval => 0); 1 };
        print {$from_reader} $ok ? "loaded\n" : "failed: $@";
        while (defined(my $line = <$reader_in>)) {
            chomp $line;
            my @got = map { "$_=" . read_value($addr, $_) } split / /, $line;
            print {$from_reader} join(' ', @got, 'warnings=' . scalar @warnings), "\n";
        }
        POSIX::_exit(0);
    }
    close $reader_in;
    close $from_reader;
    $to_reader->autoflush(1);
    is scalar(<$reader_out>), "loaded\n", 'a running reader loaded the set';
    my $ask = sub {
        print {$to_reader} "@_\n";
        my $line = <$reader_out>;
        chomp $line if defined $line;
        return { map { split /=/, $_, 2 } split / /, defined $line ? $line : '' };
    };

    Cache::Memcached::RustXS::Zstd::load_dictionaries($dir);
    my %stored;    # key => the value
    my $store = sub {
        my ($key, $id, $value) = @_;
        my $data = $id ? Cache::Memcached::RustXS::Zstd::compress($value, level => 3, dictionary => $id)
                       : Compress::Zlib::memGzip($value);
        raw_set($addr, $key, 2, $data) or die "set $key failed\n";
        $stored{$key} = $value;
    };
    $store->("a:old$_", 1, $V{gh}[$_]) for 0 .. 4;       # 5 values name ID 1
    $store->("a:new$_", 3, $V{gh}[$_]) for 10 .. 19;     # 10 name ID 3
    $store->("b:$_", 5, $V{npm}[$_]) for 0 .. 5;         # 6 name ID 5
    $store->("c:$_", 7, $V{compat}[$_]) for 0 .. 3;      # 4 name ID 7
    $store->("c:gz$_", 0, $V{compat}[$_]) for 4 .. 6;    # gzip: no dictionary
    raw_set($addr, 'plain', 0, 'not compressed') or die;
    my $keys = scalar(keys %stored) + 1;

    my $before = snapshot($dir);
    my ($st, $out, $err) = run_dict([ 'prune', '--dictionaries', $dir, '--server', $addr, '--dry-run' ]);
    is $st, 0, 'prune --dry-run --server: exit 0' or diag $err;
    like $out, qr/against \Q$addr\E: $keys keys listed, $keys values sampled \(4 prefixes\)/, '... sampled every key';
    like row_of($out, 1), qr/ retired +\S+\.dict +\d+ +5 +\S+ \(30d ago\) +kept +still named by 5 sampled values$/,
        '... ID 1: kept, still named by 5 values';
    like row_of($out, 2), qr/ retired +\S+\.dict +\d+ +0 +\S+ \(30d ago\) +would remove +retired 30d ago, and no sampled value names it$/,
        '... ID 2: would go (retired 30 days ago, named by none)';
    like row_of($out, 3), qr/ current +\S+\.dict +\d+ +10 +- +kept +the current dictionary of prefix 'a:'$/, '... ID 3: current';
    like row_of($out, 4), qr/ retired +\S+\.dict +\d+ +0 +\S+ \(2h( 0m)?\ ago\) +kept +retired only 2h( 0m)? ago$/,
        '... ID 4: retired only 2 hours ago';
    like row_of($out, 5), qr/ current +\S+\.dict +\d+ +6 +- +kept +the current dictionary of prefix 'b:'$/, '... ID 5: current';
    like row_of($out, 6), qr/ retired +\S+\.dict +\d+ +0 +\S+Z \(\d+s ago\) +kept +retired only \d+s ago$/,
        '... ID 6: retired now';
    like $out, qr/^Would remove 1 dictionary \(\d+ bytes\): ID 2 \(a-2\.dict\)/m, '... the total';
    is_deeply snapshot($dir), $before, '... and no byte of the folder changed (files and manifest)';

    ($st, $out, $err) = run_dict([ 'prune', '--dictionaries', $dir, '--server', $addr ]);
    is $st, 0, 'prune --server: exit 0' or diag $err;
    like row_of($out, 2), qr/ removed +retired 30d ago, and no sampled value names it$/, '... removes ID 2';
    is scalar(() = $out =~ /^ +\d+  .* removed  /mg), 1, '... and nothing else';
    like $out, qr/^Removed 1 dictionary \(\d+ bytes\): ID 2 \(a-2\.dict\)\. The manifest keeps its ID, as removed/m,
        '... says so';
    my $after = snapshot($dir);
    ok !exists $after->{'a-2.dict'}, '... its file is gone';
    is_deeply { map { ($_ => $after->{$_}) } grep { $_ ne 'manifest' } keys %$after },
              { map { ($_ => $before->{$_}) } grep { $_ ne 'manifest' && $_ ne 'a-2.dict' } keys %$before },
        '... every other file as it was';
    my $now = $Set->read($dir);
    is_deeply [ sort map { $_->{id} } $now->entries ], [ 1, 3, 4, 5, 6, 7 ], '... the manifest lists the others';
    is_deeply [ map { $_->{id} } $now->removed ], [2], '... and ID 2 as removed';
    my $manifest = slurp("$dir/manifest");
    like $manifest, qr/\nremoved id=2 prefix=a: removed=\S+Z\n\z/, '... appended as the last line';
    ok eval { $now->verify }, '... each file as the manifest lists it' or diag $@;

    ($st, $out, $err) = run_dict([ 'prune', '--dictionaries', $dir, '--server', $addr, '--retired-for', '1h' ]);
    is $st, 0, 'prune --retired-for 1h: exit 0' or diag $err;
    like row_of($out, 4), qr/ removed +retired 2h( 0m)? ago, and no sampled value names it$/, '... removes ID 4';
    like row_of($out, 6), qr/ kept +retired only \d+s ago$/, '... keeps ID 6, retired now';
    like row_of($out, 1), qr/ kept +still named by 5 sampled values$/, '... and ID 1, still named';
    $now = $Set->read($dir);
    is_deeply [ map { $_->{id} } $now->removed ], [ 2, 4 ], 'IDs 2 and 4 are removed';

    # Removed IDs are never given again.
    is $now->unused_id, 8, 'unused_id skips the removed IDs';
    like error_of(sub { $now->add(prefix => 'z:', dictionary => dictionary($V{api}), level => 3, id => 2) }),
        qr/dictionary ID 2 is in the set already \(prefix 'a:', removed: values may still name it\)/,
        'add refuses a removed ID';
    raw_set($addr, "d:$_", 0, $V{news}[$_]) or die for 0 .. $#{ $V{news} };
    ($st, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, '--server', $addr, '--out-dir', $dir, '--prefix', 'd',
                                   @FIXED_TUNING, @NO_LIMITS ]);
    is $st, 0, 'train --all adds a prefix to the pruned set: exit 0' or diag $err;
    $now = $Set->read($dir);
    my $d = $now->current('d:');
    ok $d, '... d: has a dictionary' or diag $out;
    my $new_id = $d ? $d->{id} : 0;
    ok $new_id >= 65536 && !(grep { $_->{id} == $new_id } $now->removed),
        "... with a random ID ($new_id): no removed ID given again";

    # Values the prune did not see: one naming the removed ID 2 (a writer
    # elsewhere), one naming the new dictionary's ID.
    Cache::Memcached::RustXS::Zstd::load_dictionaries($dir);
    $store->('a:stale', 2, $V{gh}[40]);
    $store->('d:fresh', $new_id, $V{news}[0]) if $d;
    my @keys = sort keys %stored;
    my %want = map { ($_ => Digest::SHA::sha1_hex($stored{$_})) } @keys;

    # The running reader: loaded IDs 1 to 7 before the prunes; finds the
    # new one by reading the set again; still has 2 (loaded before it was
    # removed).
    my $got = $ask->(@keys);
    is_deeply { map { ($_ => $got->{$_}) } @keys }, \%want,
        'the reader running since before the prunes reads every value (the new ID found by a rescan)';
    is $got->{warnings}, 0, '... without a warning';

    # A reader started now: the removed ID 2 is a miss, the rest decode.
    my $fresh = fresh_reader('zstd', $addr, $dir, @keys);
    is_deeply { map { ($_ => $fresh->{$_}) } grep { $_ ne 'a:stale' } @keys },
              { map { ($_ => $want{$_}) } grep { $_ ne 'a:stale' } @keys },
        'a reader started after the prunes reads the values of the kept dictionaries';
    is $fresh->{'a:stale'}, 'miss', '... and a value naming the removed ID 2 is a miss';
    like $fresh->{warnings}, qr/dictionary 2\b/, '... with a warning naming the dictionary';

  SKIP: {
        skip 'Cache::Memcached::Fast is not installed', 2 unless eval { require Cache::Memcached::Fast; 1 };
        my $fast = fresh_reader('fast', $addr, $dir, @keys);
        is $fast->{'a:stale'}, 'miss', 'Cache::Memcached::Fast with the pruned set: the removed ID is a miss';
        is_deeply { map { ($_ => $fast->{$_}) } grep { $_ ne 'a:stale' } @keys },
                  { map { ($_ => $want{$_}) } grep { $_ ne 'a:stale' } @keys }, '... the others decode';
    }
    close $to_reader;
    waitpid $reader, 0;
}

# A value read as a reader does: the digest of what it decodes to, or miss.
sub read_value {
    my ($addr, $key) = @_;
    my ($flags, $data) = raw_get($addr, $key);
    return 'miss' unless defined $flags;
    return Digest::SHA::sha1_hex($data) unless $flags & 2;
    my $value = substr($data, 0, 2) eq "\x1f\x8b" ? Compress::Zlib::memGunzip($data)
              : Cache::Memcached::RustXS::Zstd::decompress($data);
    return defined $value ? Digest::SHA::sha1_hex($value) : 'miss';
}

# What a new process that loads the set reads: through read_value ('zstd'),
# or a Cache::Memcached::Fast with the set's compress_methods ('fast').
# { key => digest or miss, warnings => what it warned }.
sub fresh_reader {
    my ($how, $addr, $dir, @keys) = @_;
    my $code = <<'CODE';
use strict;
use warnings;
use Digest::SHA ();
use Compress::Zlib ();
use CMRXTest::Raw qw(raw_get);
use Cache::Memcached::RustXS::Zstd ();
my ($how, $addr, $dir, @keys) = @ARGV;
my @warnings;
$SIG{__WARN__} = sub { push @warnings, $_[0] };
my %got;
if ($how eq 'fast') {
    require Cache::Memcached::Fast;
    my $m = Cache::Memcached::Fast->new({ servers => [$addr], compress_threshold => 100,
        compress_methods => Cache::Memcached::RustXS::Zstd::compress_methods(dictionaries => $dir, prefix => 'a:') });
    my $v = $m->get_multi(@keys);
    %got = map { ($_ => defined $v->{$_} ? Digest::SHA::sha1_hex($v->{$_}) : 'miss') } @keys;
} else {
    Cache::Memcached::RustXS::Zstd::load_dictionaries($dir, rescan_interval => 0);
    for my $key (@keys) {
        my ($flags, $data) = raw_get($addr, $key);
        my $value = !defined $flags ? undef : !($flags & 2) ? $data
                  : substr($data, 0, 2) eq "\x1f\x8b" ? Compress::Zlib::memGunzip($data)
                  : Cache::Memcached::RustXS::Zstd::decompress($data);
        $got{$key} = defined $value ? Digest::SHA::sha1_hex($value) : 'miss';
    }
}
(my $w = join '', @warnings) =~ s/\s+/ /g;
print "$_=$got{$_}\n" for @keys;
print "warnings=$w\n";
CODE
    my $script = spew("$TMP/reader.pl", $code);
    my ($status, $out) = run_command([ $^X, '-Mblib', '-It/lib', $script, $how, $addr, $dir, @keys ]);
    diag "the reader exited with status $status" if $status;
    return { map { /\A([^=]+)=(.*)\z/ ? ($1 => $2) : () } split /\n/, $out };
}

done_testing;
