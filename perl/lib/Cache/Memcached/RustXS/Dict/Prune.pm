package Cache::Memcached::RustXS::Dict::Prune;

use strict;
use warnings;

use Exporter 5.57 'import';
use Time::Local ();

use Cache::Memcached::RustXS::Zstd::DictionarySet ();
use Cache::Memcached::RustXS::Dict qw(fail);
use Cache::Memcached::RustXS::Dict::Sample qw(list_keys fetch_values);
use Cache::Memcached::RustXS::Dict::Report ();

our $VERSION = '0.101';

our @EXPORT_OK = qw(prune_set read_set print_prune prune_json parse_duration duration_text);

our $DEFAULT_RETIRED_FOR = 7 * 86400;    # longer than any TTL a site would give a value

my %UNIT = (s => 1, m => 60, h => 3600, d => 86400, w => 7 * 86400);

# ---- durations -----------------------------------------------------------------

# Seconds of a duration: a number with s, m, h, d or w after it, or a
# number alone (seconds). undef when it is none of those.
sub parse_duration {
    my ($text) = @_;
    return undef unless defined $text && $text =~ /\A([0-9]+(?:\.[0-9]+)?)([smhdw]?)\z/;
    return $1 * $UNIT{ length $2 ? $2 : 's' };
}

# A duration as people read it: "9d 2h", "36h" is "1d 12h", "5m 3s", "42s".
sub duration_text {
    my ($seconds) = @_;
    my $s = int($seconds + 0.5);
    $s = 0 if $s < 0;
    my @parts = ([ d => 86400 ], [ h => 3600 ], [ m => 60 ], [ s => 1 ]);
    for my $i (0 .. $#parts - 1) {
        my ($unit, $size) = @{ $parts[$i] };
        next if $s < $size;
        my ($next, $next_size) = @{ $parts[ $i + 1 ] };
        my $rest = int(($s % $size) / $next_size);
        return int($s / $size) . $unit . ($rest ? " $rest$next" : '');
    }
    return "${s}s";
}

# Epoch seconds of a manifest date (YYYY-MM-DDTHH:MM:SSZ), or undef.
sub _epoch {
    my ($date) = @_;
    return undef unless defined $date && $date =~ /\A([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z\z/;
    my $t = eval { Time::Local::timegm($6, $5, $4, $3, $2 - 1, $1) };
    return $t;
}

# ---- the prune -------------------------------------------------------------------

sub read_set {
    my ($dir) = @_;
    my $set = eval { Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir) };
    return $set if $set;
    (my $why = $@) =~ s/ at \S+ line [0-9]+\.?\n?\z//;
    fail($why);
}

sub prune_set {
    my (%a) = @_;
    my $dir = $a{dir};
    my $retired_for = defined $a{retired_for} ? $a{retired_for} : $DEFAULT_RETIRED_FOR;
    my $progress = $a{progress} || sub { };
    my $before = read_set($dir);

    # How many sampled stored values name each dictionary ID, over every
    # prefix (a frame names its dictionary whatever key it is under).
    my $listing = list_keys($a{source}, delimiter => $a{delimiter}, per_prefix => $a{sample},
                            progress => $a{listing_progress});
    my %named;
    my ($fetched, $groups) = (0, 0);
    for my $g (sort { $a->{prefix} cmp $b->{prefix} } values %{ $listing->{groups} }) {
        my $tag = 'prefix ' . Cache::Memcached::RustXS::Dict::Report::shown($g->{prefix});
        fetch_values($a{source}, $g, progress => sub { $progress->("$tag: fetching $_[0]/$_[1]") });
        $named{$_} += $g->{dictionary_ids}{$_} for keys %{ $g->{dictionary_ids} };
        $fetched += $g->{fetched};
        $groups++;
    }

    # Decide on the set as it is now (a writer may have added to it while
    # the values were sampled).
    my $set = read_set($dir);
    fail("$dir now holds another dictionary set (identity " . $set->identity . ', read before: '
         . $before->identity . '): not pruning it') if $set->identity ne $before->identity;
    my $now = defined $a{now} ? $a{now} : time;
    my (@dictionaries, @remove, @record);
    # Each dictionary's state as writers see it now: a staged one stays.
    for my $row (grep { $_->{state} ne 'removed' } $set->schedule(at => $now)) {
        my $e = $row->{entry};
        my $retired = $row->{state} eq 'retired' ? $row->{since} : undef;
        my %d = (id => 0 + $e->{id}, prefix => $e->{prefix}, state => $row->{state}, file => $e->{file},
                 size => 0 + $e->{size}, named_by => $named{ $e->{id} } || 0, retired => $retired);
        push @dictionaries, \%d;
        if ($row->{state} ne 'retired') {
            @d{qw(action why)} = ('keep', ($row->{state} eq 'current' ? 'the current dictionary of prefix '
                                           : "staged: current from $row->{since} for prefix ")
                                          . "'" . Cache::Memcached::RustXS::Dict::Report::shown($e->{prefix}) . "'");
            next;
        }
        my $at = _epoch($retired);
        $d{retired_ago} = $now - $at if defined $at;
        my @keep;
        push @keep, 'still named by ' . Cache::Memcached::RustXS::Dict::Report::plural($d{named_by}, 'sampled value')
            if $d{named_by};
        if (!defined $at) {
            if ($retired_for > 0) {
                push @keep, 'retired at an unknown time (the manifest has no date for it)';
                $d{record} = 1;
            }
        } elsif ($d{retired_ago} < $retired_for) {
            push @keep, 'retired only ' . duration_text($d{retired_ago}) . ' ago';
        }
        if (@keep) {
            @d{qw(action why)} = ('keep', join '; ', @keep);
            push @record, $e->{id} if $d{record};
            next;
        }
        @d{qw(action why)} = ('remove', (defined $at ? 'retired ' . duration_text($d{retired_ago}) . ' ago'
                                                      : 'retired at an unknown time')
                                        . ', and no sampled value names it');
        push @remove, $e->{id};
    }
    delete $_->{record} for @dictionaries;
    my %in_set = map { ($_->{id} => 1) } @dictionaries;
    my %removed_at = map { ($_->{id} => $_->{removed}) } $set->removed;
    my @others = map { +{ id => 0 + $_, named_by => $named{$_},
                          (exists $removed_at{$_} ? (removed => $removed_at{$_}) : ()) } }
                 grep { !$in_set{$_} } sort { $a <=> $b } keys %named;

    my $written = 0;
    if (!$a{dry_run} && (@remove || @record)) {
        # Retirements of unknown date are counted from now: the set holds
        # them at least --retired-for longer.
        $set->retire($_, retired => $now) for @record;
        $set->remove($_) for @remove;
        eval { $set->write; 1 } or do {
            (my $why = $@) =~ s/ at \S+ line [0-9]+\.?\n?\z//;
            fail($why =~ /changed since this set was read/
                 ? "$dir changed while prune sampled the values (another writer): nothing was removed; "
                   . 'run prune again' : $why);
        };
        $written = 1;
    }
    return { command => 'prune', dir => $dir, source => $a{source}->spec, dry_run => $a{dry_run} ? 1 : 0,
             retired_for => $retired_for, now => $now, keys => $listing->{keys}, prefixes => $groups,
             values => $fetched, dictionaries => \@dictionaries, other_ids => \@others,
             removed => [ map { 0 + $_ } @remove ], recorded => [ map { 0 + $_ } @record ],
             written => $written, set => $set };
}

# ---- output ------------------------------------------------------------------------

sub _date_text {
    my ($d) = @_;
    return '-' if $d->{state} eq 'current';
    return 'unknown' unless defined $d->{retired};
    return $d->{retired} . (defined $d->{retired_ago} ? ' (' . duration_text($d->{retired_ago}) . ' ago)' : '');
}

# Columns aligned as $align says: l (left) or r (right) for each.
sub _table {
    my ($fh, $align, @rows) = @_;
    my @width;
    for my $row (@rows) {
        for my $i (0 .. $#$row) {
            my $l = length $row->[$i];
            $width[$i] = $l if !defined $width[$i] || $l > $width[$i];
        }
    }
    for my $row (@rows) {
        my @cells = map { sprintf(substr($align, $_, 1) eq 'r' ? '%*s' : '%-*s', $width[$_], $row->[$_]) }
                    0 .. $#$row;
        (my $line = join '  ', @cells) =~ s/\s+\z//;
        print {$fh} "  $line\n";
    }
    return;
}

sub print_prune {
    my ($fh, $r) = @_;
    my $plural = \&Cache::Memcached::RustXS::Dict::Report::plural;
    printf {$fh} "cmrx-dict prune of the dictionary set in %s, against %s: %s listed, %s sampled (%s)\n",
        $r->{dir}, $r->{source}, $plural->($r->{keys}, 'key'), $plural->($r->{values}, 'value'),
        $r->{prefixes} == 1 ? '1 prefix' : "$r->{prefixes} prefixes";
    printf {$fh} "A retired dictionary goes when no sampled value names it and it was retired at least %s ago.%s\n\n",
        duration_text($r->{retired_for}), $r->{dry_run} ? ' Dry run: nothing is changed.' : '';
    my %action = $r->{dry_run} ? (remove => 'would remove', keep => 'kept') : (remove => 'removed', keep => 'kept');
    _table($fh, 'rlllrrlll', [ 'ID', 'prefix', 'state', 'file', 'bytes', 'named by', 'retired', 'action', 'why' ],
        map { [ $_->{id}, Cache::Memcached::RustXS::Dict::Report::shown($_->{prefix}), $_->{state}, $_->{file},
                $_->{size}, $_->{named_by}, _date_text($_), $action{ $_->{action} }, $_->{why} ] }
            @{ $r->{dictionaries} });
    my %by_id = map { ($_->{id} => $_) } @{ $r->{dictionaries} };
    my @gone = map { $by_id{$_} } @{ $r->{removed} };
    print {$fh} "\n";
    if (@gone) {
        my $bytes = 0;
        $bytes += $_->{size} for @gone;
        printf {$fh} "%s %s (%d bytes): %s. The manifest keeps %s, as removed, so that no other "
                   . "dictionary is given %s.\n", ($r->{dry_run} ? 'Would remove' : 'Removed'),
            $plural->(scalar @gone, 'dictionary'), $bytes, join(', ', map { "ID $_->{id} ($_->{file})" } @gone),
            (@gone == 1 ? ('its ID', 'it') : ('their IDs', 'them'));
    } else {
        print {$fh} "No dictionary to remove.\n";
    }
    if (@{ $r->{recorded} }) {
        printf {$fh} "%s now as the retirement date of %s, retired before dates were recorded: prune "
                   . "removes %s from %s on, when no sampled value names %s.\n",
            ($r->{dry_run} ? 'Would record' : 'Recorded'),
            (@{ $r->{recorded} } == 1 ? 'ID ' : 'IDs ') . join(', ', @{ $r->{recorded} }),
            (@{ $r->{recorded} } == 1 ? 'it' : 'them'), duration_text($r->{retired_for}),
            (@{ $r->{recorded} } == 1 ? 'it' : 'them');
    }
    for my $o (@{ $r->{other_ids} }) {
        printf {$fh} "ID %d, named by %s, is not in the set%s: readers of the set miss those values.\n",
            $o->{id}, $plural->($o->{named_by}, 'sampled value'),
            defined $o->{removed} ? " (removed $o->{removed})" : '';
    }
    print {$fh} "Dry run: the set was not changed.\n" if $r->{dry_run};
    return;
}

sub prune_json {
    my ($r) = @_;
    my %d = map { ($_ => $r->{$_}) } qw(command dir source retired_for keys prefixes values removed recorded other_ids);
    $d{dry_run} = $r->{dry_run} ? Cache::Memcached::RustXS::Dict::Report::json_true()
                                : Cache::Memcached::RustXS::Dict::Report::json_false();
    $d{changed} = $r->{written} ? Cache::Memcached::RustXS::Dict::Report::json_true()
                                : Cache::Memcached::RustXS::Dict::Report::json_false();
    $d{dictionaries} = [ map { my $x = $_; +{ map { defined $x->{$_} ? ($_ => $x->{$_}) : () } keys %$x } }
                         @{ $r->{dictionaries} } ];
    $_->{prefix} = Cache::Memcached::RustXS::Dict::Report::text($_->{prefix}) for @{ $d{dictionaries} };
    return \%d;
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Prune - cmrx-dict prune: remove the retired dictionaries of a set that no stored value names any more

=head1 SYNOPSIS

    use File::Temp ();
    use Cache::Memcached::RustXS::Zstd qw(train_dictionary);
    use Cache::Memcached::RustXS::Zstd::DictionarySet;
    use Cache::Memcached::RustXS::Dict::Sets qw(read_dump);
    use Cache::Memcached::RustXS::Dict::Prune qw(prune_set print_prune parse_duration);

    # A set whose prefix user: had two dictionaries: ID 1, retired 30 days
    # ago, and ID 2, current
    my $tmp = File::Temp->newdir;
    my $dir = "$tmp/dictionaries";
    my @users = map { qq({"id":$_,"name":"user$_","plan":"free","tags":["a","b"]}) } 1 .. 500;
    my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->create($dir);
    $set->add(prefix => 'user:', dictionary => train_dictionary(\@users), level => 9, id => 1);
    $set->add(prefix => 'user:', dictionary => train_dictionary([ reverse @users ]), level => 9, id => 2);
    $set->retire(1, retired => time - 30 * 86400);
    $set->write;

    # The values the cache holds (here a get response in a file; usually a
    # live server: Cache::Memcached::RustXS::Dict::Server->connect('127.0.0.1:11211'))
    my $dump = File::Temp->new;
    print {$dump} "VALUE user:1 0 " . length($users[0]) . "\r\n$users[0]\r\nEND\r\n";
    close $dump;

    my $result = prune_set(dir => $dir, source => read_dump(["$dump"]), delimiter => ':',
                           sample => 1000, retired_for => parse_duration('7d'));
    print_prune(\*STDOUT, $result);     # ID 1 removed, ID 2 kept (current)

=head1 DESCRIPTION

C<cmrx-dict prune> (the manual, F<cmrx-dict.pod>, describes the command).
It samples the values of a source (a L<Cache::Memcached::RustXS::Dict::Server>
or the values of files, L<Cache::Memcached::RustXS::Dict::Sets/read_dump(\@files)>)
as L<Cache::Memcached::RustXS::Dict::Sample> does, counts the stored zstd
frames that name each dictionary ID, and removes from the
L<Cache::Memcached::RustXS::Zstd::DictionarySet> the retired dictionaries
that no sampled value names and that were retired at least a given time
ago. Current dictionaries always stay. A removed dictionary's ID stays in
the manifest (a C<removed> line), so the set never gives it to another
dictionary.

=head1 FUNCTIONS

Exported on request: C<prune_set>, C<read_set>, C<print_prune>,
C<prune_json>, C<parse_duration>, C<duration_text>.

=over 4

=item prune_set(dir => $dir, source => $source, delimiter => ':', sample => 1000, retired_for => 604800, dry_run => 0, now => time, progress => sub { }, listing_progress => sub { })

Reads the set in C<$dir> (fails, saying why, when it is not a set), lists
and samples the source's keys (C<sample> keys per prefix, by C<delimiter>),
reads the set again and decides on each dictionary:

=over 4

=item *

a current dictionary stays;

=item *

a retired one stays while sampled values name it, or while it was retired
less than C<retired_for> seconds ago (7 days by default: longer than the
time to live of any value a site stores), or when the manifest has no date
for its retirement (sets written before dates were recorded) and
C<retired_for> is above 0;

=item *

every other retired dictionary is removed.

=back

Unless C<dry_run>, the set is then written (atomically, as
L<Cache::Memcached::RustXS::Zstd::DictionarySet/write> does: the manifest
first, then the files of the removed dictionaries are deleted), with the
retirements of unknown date recorded as C<now>, so that a prune
C<retired_for> later may remove them. Nothing is written when nothing
changes. It fails, removing nothing, when the set changed between its reading and
the write (another writer): run it again.

Returns a hash reference: C<dir>, C<source> (the source's C<spec>),
C<dry_run>, C<retired_for>, C<now>, C<keys> (listed), C<prefixes>,
C<values> (fetched), C<dictionaries> (per dictionary of the set: C<id>,
C<prefix>, C<state>, C<file>, C<size>, C<named_by>, C<retired> (its date),
C<retired_ago> (seconds), C<action> (C<remove> or C<keep>) and C<why>),
C<other_ids> (IDs that sampled values name and the set has not:
C<id>, C<named_by>, and C<removed> when the set removed it),
C<removed> and C<recorded> (IDs), C<written> (whether the set was
written) and C<set> (the set, as written when it was).

=item read_set($dir)

The set in C<$dir>
(L<Cache::Memcached::RustXS::Zstd::DictionarySet/read($dir)>), or a failure
saying why it is not one (no such folder, no manifest, a malformed one).

=item print_prune($fh, $result), prune_json($result)

The result as a table with a line of totals (what was removed or would be,
what is kept and why), or as data for JSON.

=item parse_duration($text)

The seconds of a duration: a number (decimals allowed) followed by C<s>,
C<m>, C<h>, C<d> or C<w> (seconds, minutes, hours, days, weeks), or a number
alone (seconds): C<7d>, C<36h>, C<3600s>, C<3600>, C<1.5d>. C<undef> for
anything else.

=item duration_text($seconds)

Seconds as people read them, in the two largest units: C<9d 2h>, C<1d 12h>,
C<5m 3s>, C<42s>.

=back

=head1 SEE ALSO

L<cmrx-dict>, L<Cache::Memcached::RustXS::Dict::Sets>,
L<Cache::Memcached::RustXS::Zstd::DictionarySet>.

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
