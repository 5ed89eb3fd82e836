package CMRXTest::Synopsis;

# Test helper: every module's SYNOPSIS run as written, against a real
# memcached, in a scratch directory, checked for what its comments say.
# t/04 runs those that load no client, t/05 those that do (so the client
# matrix's release rows run t/05 alone). See the POD at the end of the file.

use strict;
use warnings;

use Cwd ();
use Exporter 'import';
use File::Spec ();
use File::Temp ();
use Test::More ();
use CMRXTest::Clients qw(fast_missing cache_memcached_missing);
use CMRXTest::Modules qw(modules module_file);

our $VERSION   = '0.01';
our @EXPORT_OK = qw(synopsis_of loads_client check_synopses missing_client run_in_scratch users_dict_scratch);

my $ROOT = Cwd::abs_path('.');

# What each SYNOPSIS must have achieved, checked after it ran (with
# CMRXTest::Raw's raw_get at hand, and __ADDR__ the server's address).
my %AFTER = (
    'Cache::Memcached::RustXS' => q{
        $memd->set(k => 'v') && $memd->get('k') eq 'v' or die "Cache::Memcached round trip\n";
        $fast->set(k => 'x' x 5000) && $fast->get('k') eq 'x' x 5000 or die "Fast round trip\n";
    },
    'Cache::Memcached::RustXS::Dict' => q{
        $@->kind eq 'failure' && "$@" eq 'the server closed the connection' or die "the error\n";
    },
    'Cache::Memcached::RustXS::Dict::NodeReader' => q{
        # (not $count > 0: memcached's crawler misses an item the LRU
        # maintainer is moving at that moment, and a few are stored here)
        $count == keys %size_of or die "each_key\n";
        keys %$got == @first or die "get_multi\n";
        $settings->{item_size_max} >= 1024 && $settings->{growth_factor} > 1 or die "settings\n";
        !grep { $_ < 48 } @chunks or die "slab_chunk_sizes\n";
    },
    'Cache::Memcached::RustXS::Dict::Sample' => q{
        use List::Util qw(sum);
        $listing->{keys} == sum(0, map { $_->{keys} } values %{ $listing->{groups} }) or die "list_keys\n";
        $users->{keys} == 10 && @{ $users->{sample} } == 2 or die "the sampler\n";
        !defined $value && $why eq 'gzip that does not decompress' or die "decode_value\n";
    },
    'Cache::Memcached::RustXS::Dict::Measure' => q{
        $m->{values} == 200 && $m->{zstd_dict}{bytes} < $m->{zstd}{bytes} or die "measure_held_out\n";
        $measured->{memGzip}{bytes} > 0 && $measured->{zstd}{bytes} > 0 or die "measure\n";
    },
    'Cache::Memcached::RustXS::Dict::Report' => q{
        $text eq "  prefix                  values  retired for\n"
               . "  user:                 3 values       1d 12h\n"
               . "  '' (the whole cache)   1 value          42s\n" or die "table\n";
    },
    'Cache::Memcached::RustXS::Dict::Report::Values' => q{
        $report->{total}{values} == 150 && $report->{prefixes}[0]{prefix} eq 'user' or die "report_data\n";
    },
    'Cache::Memcached::RustXS::Dict::Report::Dictionaries' => q{
        @{ $data->{prefixes} } == 1 && $data->{prefixes}[0]{prefix} eq 'user:'
            && $data->{prefixes}[0]{verdict} eq 'current' && $data->{set}[0]{state} eq 'current'
            or die "set_data of report_set\n";
    },
    'Cache::Memcached::RustXS::Dict::SettingsAdvisor' => q{
        $advice->{nodes}[0]{best}{items} > $advice->{nodes}[0]{current}
            && $advice->{nodes}[0]{change} or die "advise\n";
    },
    'Cache::Memcached::RustXS::Dict::SlabModel' => q{
        $memory->item_memory(30, 600, 2) == 752 && $memory->item_memory(30, 400, 2) == 600 or die "item_memory\n";
        $memory->resident_items(\@writes) > 100_000 or die "resident_items\n";
        $memory->with_settings(growth_factor => 1.08, cas => 0)->forecast_items(\@sample)
            > $memory->forecast_items(\@sample) or die "forecast_items\n";
    },
    'Cache::Memcached::RustXS::Dict::Tune' => q{
        $tuned->{choice} && $tuned->{choice}{memory} < $tuned->{baseline}{memGzip}{memory} or die "tune\n";
        $fallback->{method} =~ /\A(?:gzip|zstd)\z/ or die "tune_fallback\n";
    },
    'Cache::Memcached::RustXS::Dict::SetTrainer' => q{
        $trained->{set}->current('user:') or die "train_all\n";
        $report->{prefixes}[0]{verdict} eq 'current' or die "report_set\n";
    },
    'Cache::Memcached::RustXS::Dict::Workers' => q{
        join(',', map { $square{$_} } 1 .. 4) eq '1,4,9,16' or die "every result back\n";
    },
    'Cache::Memcached::RustXS::Dict::Progress' => q{
        $progress->time_left == 0 or die "nothing left once all are done\n";
    },
    'Cache::Memcached::RustXS::Dict::Pool' => q{
        my @groups = values %{ $listing->{groups} };
        !grep { "@{ $_->{keys_by_node} }" ne $_->{keys} || !defined $_->{fetched} } @groups or die "list_keys, fetch_values\n";
        $memory->item_memory(30, 400, 2) or die "from_server\n";
    },
    'Cache::Memcached::RustXS::Dict::Files' => q{
        "@$values" eq 'value 1 ! value 2 ! value 3 !' or die "read, fetched\n";
        $read->{values}[0] eq '{"id":1}' && $read->{files} == 1 or die "read_sample_files\n";
    },
    'Cache::Memcached::RustXS::Dict::Prune' => q{
        "@{ $result->{removed} }" eq '1' && !-e "$dir/user-1.dict" && -e "$dir/user-2.dict" or die "prune_set\n";
        my $now = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir);
        !$now->entry(1) && (grep { $_->{id} == 1 } $now->removed) && $now->unused_id == 3 or die "removed ID 1\n";
    },
    'Cache::Memcached::RustXS::Dict::Rollout' => q{
        $r->{kind} eq 'cancel' && $r->{to} == $first->{id} && $r->{from} == $first->{id} && $r->{cancelled}
            or die "rollback_set\n";
        my $now = Cache::Memcached::RustXS::Zstd::DictionarySet->read("$tmp/set");
        $now->current('user:')->{id} == $first->{id} && !grep({ $_->{state} eq 'staged' } $now->schedule)
            or die "the staged one cancelled\n";
    },
    'Cache::Memcached::RustXS::Dict::CLI' => q{
        $status == 0 or die "main: $status\n";
    },
    'Cache::Memcached::RustXS::ClientInternals' => q{
        $why eq '' or die "zstd writing is unavailable: $why\n";
    },
    'Cache::Memcached::RustXS::GetParser' => q{
        $value eq 'hello' or die "get gave @{[ defined $value ? $value : 'undef' ]}\n";
        $values->{greeting} eq 'hello' && !exists $values->{missing} or die "get_multi\n";
        ref($memd->{parser_class}) || $memd->{parser_class} eq 'Cache::Memcached::RustXS::GetParser' or die "parser_class\n";
    },
    'Cache::Memcached::RustXS::Memcached' => q{
        $json eq '{"id":7,"name":"Ann","plan":"free"}' x 5 or die "get gave @{[ defined $json ? $json : 'undef' ]}\n";
        my ($flags, $stored) = raw_get('__ADDR__', 'user:7');
        $flags == 2 && substr($stored, 0, 4) eq "\x28\xb5\x2f\xfd" or die "not stored as zstd\n";
        length $stored < length $json or die "not smaller\n";
    },
    'Cache::Memcached::RustXS::Zstd::DictionarySet::IDs' => q{
        $id >= 65536 && $id != 70000 or die "random_unused_id gave $id\n";
    },
    'Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest' => q{
        $date eq '2026-01-01T00:00:00Z' && epoch_of($date) == 1767225600 or die "manifest_date gave $date\n";
    },
    'Cache::Memcached::RustXS::Dict::Report::Set' => q{
        $text =~ /^The decisions of the dictionary set in dictionaries, at 2026-05-01T10:00:00Z: 1 decision\n/
            && $text =~ /^\s*1\s+2026-05-01T10:00:00Z\s+2026-05-01T11:00:01Z\s+user:\s+train\s+7\s+pending$/m
            or die "print_history\n";
    },
    'Cache::Memcached::RustXS::Zstd::DictionarySet::State' => q{
        !keys %{ $state->{writers} } && !@{ $state->{rows} } or die "state_at of no entries\n";
    },
    'Cache::Memcached::RustXS::Zstd::DictionarySet' => q{
        $for->{id} == $user->{id} && $for->{prefix} eq 'user:' or die "for_key\n";
        !grep({ $_->{state} eq 'staged' } $set->schedule) or die "the rollback cancels what was staged\n";
        length $bytes > 1000 or die "dictionary_bytes\n";
        my @e = $set->entries;
        @e == 3 && (grep { $_->{state} eq 'retired' } $set->schedule) == 1 or die "entries\n";
        Cache::Memcached::RustXS::Zstd::decompress(Cache::Memcached::RustXS::Zstd::compress(
            $users[0], level => 9, dictionary => $new->{id})) eq $users[0] or die "loaded\n";
    },
    'Cache::Memcached::RustXS::Zlib' => q{
        $plain eq $json && $back eq $json or die "round trips\n";
        substr($gz, 0, 2) eq "\x1f\x8b" or die "not gzip\n";
        !Cache::Memcached::RustXS::Zlib::compress_zlib_overridden() or die "still overridden\n";
        $fast->set(j => $json) && $fast->get('j') eq $json or die "Fast with compress_methods\n";
        $memd->set(m => $json) && $memd->get('m') eq $json or die "Cache::Memcached\n";
    },
    'Cache::Memcached::RustXS::Zstd' => q{
        my $record = '{"id":7,"name":"user7","plan":"free","tags":["a","b"]}';
        $json eq $record && substr($frame, 0, 4) eq "\x28\xb5\x2f\xfd" or die "round trip\n";
        $id == Cache::Memcached::RustXS::Zstd::load_dictionary('users.dict') or die "dictionary\n";
        $fast->set(u => $record x 3) && $fast->get('u') eq $record x 3 or die "Fast\n";
        my ($fast_flags, $fast_stored) = raw_get('__ADDR__', 'u');
        substr($fast_stored, 0, 4) eq "\x28\xb5\x2f\xfd" or die "Fast did not write zstd\n";
        $memd->set(m => $record x 3) && $memd->get('m') eq $record x 3 or die "Memcached\n";
        $memd->get('u') eq $record x 3 && $fast->get('m') eq $record x 3 or die "each reads the other\n";
        $users->set(7, '{"id":7}' x 50) && $users->get(7) eq '{"id":7}' x 50 or die "Fast with the set\n";
        require File::Path; File::Path::rmtree($set->dir);
    },
);

# The SYNOPSIS of a module, unindented, or undef.
sub synopsis_of {
    my ($module) = @_;
    my $pod = do { local (@ARGV, $/) = (module_file($module)); <> };
    my ($synopsis) = $pod =~ /^=head1 SYNOPSIS\n(.*?)^=head1 /ms;
    return undef unless defined $synopsis;
    $synopsis =~ s/^    //mg;    # verbatim paragraphs are indented by four
    return $synopsis;
}

# Whether a SYNOPSIS uses a client: Cache::Memcached, Cache::Memcached::Fast,
# or what wraps or inspects them.
sub loads_client {
    my ($synopsis) = @_;
    return $synopsis =~ /\bCache::Memcached(?:::Fast)?(?:->|\s*;|\s+qw)|\bCache::Memcached::RustXS::(?:Memcached|ClientInternals)\b/ ? 1 : 0;
}

# What a SYNOPSIS (or any example) needs that a host may lack: the reason
# to skip it, or ''.
sub missing_client {
    my ($synopsis) = @_;
    # (asking whether a client is missing loads it: only when it is used)
    return fast_missing() if $synopsis =~ /^\s*use Cache::Memcached::Fast\b/m && fast_missing();
    return cache_memcached_missing()
        if $synopsis =~ /^\s*use Cache::Memcached(?:::RustXS::Memcached)?\s*;/m && cache_memcached_missing();
    return '';
}

# Runs perl code in $scratch with the built modules and t/lib; returns its
# output (stdout and stderr), with $? set.
sub run_in_scratch {
    my ($scratch, $code) = @_;
    my $path = File::Spec->catfile("$scratch", 'run.pl');
    open my $fh, '>', $path or die "$path: $!";
    print {$fh} "use strict;\nuse warnings FATAL => 'all';\n$code\n";
    close $fh or die "$path: $!";
    my @inc = map { File::Spec->catdir($ROOT, @$_) } [qw(blib lib)], [qw(blib arch)], [qw(t lib)];
    my $cwd = Cwd::getcwd();
    chdir "$scratch" or die "chdir $scratch: $!";
    my $out = `"$^X" @{[ map { qq("-I$_") } @inc ]} run.pl 2>&1`;
    chdir $cwd or die "chdir $cwd: $!";
    return $out;
}

# A scratch directory (a File::Temp dir object) holding users.dict, as
# Zstd's SYNOPSIS trains it, and the output of the perl that trained it.
sub users_dict_scratch {
    my $scratch = File::Temp->newdir;
    my $out = run_in_scratch($scratch, q{
        use Cache::Memcached::RustXS::Zstd qw(train_dictionary);
        my @samples = map { qq({"id":$_,"name":"user$_","plan":"free","tags":["a","b"]}) } 1 .. 500;
        open my $fh, '>', 'users.dict' or die $!;
        binmode $fh;
        print {$fh} train_dictionary(\@samples, size => 16384);
        close $fh or die $!;
    });
    return ($scratch, $out);
}

# Runs the SYNOPSIS of every module whose loads_client is $clients (1 or
# 0), with 127.0.0.1:11211 replaced by $addr, as tests.
sub check_synopses {
    my (%args) = @_;
    my ($addr, $clients) = @args{qw(addr clients)};
    my %synopsis = map { ($_ => synopsis_of($_)) } modules();
    my @modules = grep { !defined $synopsis{$_} || loads_client($synopsis{$_}) == $clients } sort keys %synopsis;
    Test::More::ok(scalar @modules, 'SYNOPSES that ' . ($clients ? 'load' : 'load no') . ' client: '
                                   . scalar(@modules) . ' modules');
    my ($scratch, $out) = users_dict_scratch();
    Test::More::ok(-s File::Spec->catfile("$scratch", 'users.dict'), 'users.dict trained in the scratch directory')
        or Test::More::diag($out);
    for my $module (@modules) {
        my $synopsis = $synopsis{$module};
        Test::More::ok(defined $synopsis && $synopsis =~ /\S/, "$module has a SYNOPSIS") or next;
        Test::More::ok(exists $AFTER{$module}, "$module: this test says what its SYNOPSIS must achieve") or next;
        my $count = $synopsis =~ s/127\.0\.0\.1:11211/$addr/g;
        (my $after = $AFTER{$module}) =~ s/__ADDR__/$addr/g;
      SKIP: {
            my $missing = missing_client($synopsis);
            Test::More::skip("$module: its SYNOPSIS needs what is missing here: $missing", 3) if $missing;
            my $out = run_in_scratch($scratch, "$synopsis\nuse CMRXTest::Raw qw(raw_get);\n$after\nprint \"SYNOPSIS OK\\n\";\n");
            Test::More::is($?, 0, "$module: SYNOPSIS runs (with $count server address(es) set to the test's)")
                or Test::More::diag($out);
            Test::More::like($out, qr/SYNOPSIS OK/, "$module: and does what it says");
            Test::More::unlike($out, qr/warn|uninitialized|deprecated/i, "$module: without warnings");
      }
    }
    return;
}

1;

__END__

=head1 NAME

CMRXTest::Synopsis - every module's SYNOPSIS run as written and checked

=head1 SYNOPSIS

    use CMRXTest::Memcached;
    use CMRXTest::Synopsis qw(check_synopses);

    my $server = CMRXTest::Memcached->start_or_skip;
    check_synopses(addr => $server->address, clients => 0);    # t/04: those that load no client
    done_testing;

=head1 DESCRIPTION

Every module MANIFEST lists (L<CMRXTest::Modules>) has a SYNOPSIS that
runs as written. C<check_synopses> runs, in a child perl with the built
modules (F<blib>) and F<t/lib>, in a scratch directory that holds
F<users.dict> (a zstd dictionary trained on the user records the
SYNOPSES store), the SYNOPSIS of each module whose C<loads_client> is
C<clients>, with C<127.0.0.1:11211> replaced by C<addr>, followed by
what this module's table says it must have achieved (C<%AFTER>, one
entry per module: a module without one fails). Each gives the tests: it
exits 0, it printed what the check prints at its end, and nothing it
printed looks like a warning. A SYNOPSIS that uses a client missing here
skips, saying which.

F<t/04-synopsis-dict.t> runs those that load no client, F<t/05-synopsis.t>
those that do: the client matrix's release rows, which run the test files
that load a client, then leave the first out. Together they run every
module's.

F<t/09-fast-examples.t> runs every example that makes a
Cache::Memcached::Fast object with this distribution's methods (the
SYNOPSES among them) through C<users_dict_scratch>, C<run_in_scratch> and
C<missing_client>.

=head1 FUNCTIONS

Exported on request.

=over 4

=item C<synopsis_of($module)>

The module's SYNOPSIS, its four-space indentation removed; undef when it
has none.

=item C<loads_client($synopsis)>

1 when the SYNOPSIS uses Cache::Memcached or Cache::Memcached::Fast
(C<use>, C<< ->new >>) or the modules that wrap or inspect them
(Cache::Memcached::RustXS::Memcached, ::ClientInternals), else 0.

=item C<check_synopses(addr =E<gt> $address, clients =E<gt> 0 or 1)>

The tests above, for those modules.

=item C<users_dict_scratch()>

A scratch directory (a L<File::Temp> directory object, removed when it goes
out of scope) holding F<users.dict>, and the output of the perl that
trained it there.

=item C<run_in_scratch($dir, $code)>

Runs C<$code> under C<use strict> and C<use warnings FATAL =E<gt> 'all'> in
a child perl with the built modules and F<t/lib>, in C<$dir>; returns what
it printed (stdout and stderr), with C<$?> set.

=item C<missing_client($code)>

Why a client that C<$code> loads (C<use Cache::Memcached::Fast>,
C<use Cache::Memcached>, C<use Cache::Memcached::RustXS::Memcached>) cannot
be used here, or the empty string. Only the clients it loads are asked for
(asking loads them).

=back

=cut
